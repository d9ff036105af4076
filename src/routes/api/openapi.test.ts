import { beforeAll, describe, expect, it } from "vitest";
import { deployBody, type Fetch, targets } from "../../../test/support/app.ts";
import { fakeRuntime } from "../../../test/support/fake-runtime.ts";
import {
  ajvErrors,
  compileDocument,
  type Doc,
  findOperation,
  sseEvents,
} from "../../../test/support/openapi.ts";
import { HooklineError } from "../../errors.ts";
import type { WebhookData } from "../../model/records.ts";
import type { Runtime } from "../../runtime/runtime.ts";

/**
 * The generated document against the real app: every documented route is called with good and
 * bad input, each answer must have a documented status and media type and a body that the
 * document's schema for that status accepts, and every route the app serves must be documented.
 */

const MANIFEST = `
version: v2
project:
  name: shop
vars:
  - name: GREETING
    value: hello
triggers:
  - name: order
    type: webhook
    call: handlers.py:on_order
    is_durable: true
  - name: waiter
    type: webhook
    call: handlers.py:on_wait
    reuse_process: true
  - name: source
    type: webhook
  - name: hold
    type: webhook
    call: handlers.py:on_hold
    is_durable: true
`;
const FILES = {
  "handlers.py": "def on_order(event):\n    pass\n\ndef on_manual(event):\n    pass\n",
};
const TOKEN = "t0ken";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const BASE = "/api/v1";

for (const target of targets) {
  describe(`openapi.json against the app (${target.name})`, () => {
    let fetch: Fetch;
    let hook: Awaited<ReturnType<(typeof targets)[number]["make"]>>["hook"];
    let doc: Doc;
    let validator: ReturnType<typeof compileDocument>;
    /** operationId → the statuses it answered in this suite. */
    const seen = new Map<string, Set<number>>();
    let release: () => void = () => {};
    const released = new Promise<void>((r) => (release = r));
    let releaseHold: () => void = () => {};
    const holdReleased = new Promise<void>((r) => (releaseHold = r));

    beforeAll(async () => {
      const fake = fakeRuntime({
        "handlers.py:on_order": async (spec, wf) => {
          wf.print("got an order", "stdout");
          await wf.activity("shop.charge", () => "charged");
          wf.outcome({ status_code: 201, headers: {}, body: Buffer.from("ok"), more: false });
          if ((spec.event.data as WebhookData).url.path_suffix === "/fail")
            throw new Error("out of stock");
        },
        "handlers.py:on_manual": (spec, wf) => wf.print(JSON.stringify(spec.event.data)),
        "handlers.py:on_wait": async (_spec, wf) => {
          const id = await wf.subscribe("source", "");
          await wf.nextEvent([id], 10);
          await released;
        },
        "handlers.py:on_hold": async (_spec, wf) => {
          await wf.activity("shop.hold", () => 1);
          await holdReleased;
        },
      });
      // A build with NO_PYTHON in it stands for one whose Python cannot be prepared (503).
      const runtime: Runtime = {
        ...fake.runtime,
        // A replay check of a build with DIVERGE in it: code whose first step is another one.
        run(spec, build, host) {
          if (!spec.check || !("DIVERGE" in build.files))
            return fake.runtime.run(spec, build, host);
          const done = host.step({ kind: "activity", seq: 0, function: "shop.other" }).then(
            () => ({ state: "completed" as const }),
            (e: Error) => ({ state: "error" as const, message: e.message }),
          );
          return { done, stop: async () => {} };
        },
        async check(build, calls, onProgress) {
          if ("NO_PYTHON" in build.files) throw new HooklineError("unavailable", "no Python here");
          return fake.runtime.check(build, calls, onProgress);
        },
      };
      ({ fetch, hook } = await target.make(runtime, { access: { apiToken: TOKEN } }));
      const res = await fetch(`${BASE}/openapi.json`);
      expect(res.status).toBe(200);
      doc = (await res.json()) as Doc;
      validator = compileDocument(doc);
    });

    /** Calls the API and checks the answer against the document; returns the parsed body. */
    async function call<T = unknown>(
      method: string,
      path: string,
      init: RequestInit = {},
      auth = true,
    ): Promise<T> {
      const found = findOperation(doc, method, path.split("?")[0]!);
      expect(found, `${method.toUpperCase()} ${path} is documented`).not.toBeNull();
      const { template, op } = found!;
      const res = await fetch(`${BASE}${path}`, {
        ...init,
        method: method.toUpperCase(),
        headers: { ...(auth ? AUTH : {}), ...(init.headers as Record<string, string>) },
      });
      const where = `${method.toUpperCase()} ${path} → ${res.status}`;
      const answer = op.responses[String(res.status)];
      expect(answer, `${where} is a documented status`).toBeDefined();
      seen.set(op.operationId, (seen.get(op.operationId) ?? new Set()).add(res.status));
      const text = await res.text();
      const media = Object.keys(answer!.content ?? {});
      if (!media.length) {
        expect(text, `${where} has no body`).toBe("");
        return null as T;
      }
      const type = res.headers.get("content-type")?.split(";")[0];
      expect(media, `${where} content-type`).toContain(type);
      if (type === "text/event-stream") {
        const events = sseEvents(text);
        for (const e of events) {
          const check = validator([
            "paths",
            template,
            method,
            "responses",
            "200",
            "x-events",
            e.name,
          ]);
          expect(check(e.data), `${where} event ${e.name}: ${ajvErrors(check)}`).toBe(true);
        }
        return events as T;
      }
      const body = JSON.parse(text) as unknown;
      const check = validator([
        "paths",
        template,
        method,
        "responses",
        String(res.status),
        "content",
        type!,
        "schema",
      ]);
      expect(check(body), `${where}: ${ajvErrors(check)}\n${text.slice(0, 500)}`).toBe(true);
      return body as T;
    }

    const json = (body: unknown): RequestInit => ({
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

    it("answers good input as documented", async () => {
      const deployed = await call<{ lines: string[] }>(
        "post",
        "/deploy",
        deployBody(MANIFEST, FILES),
      );
      expect(deployed.lines.at(-1)).toBe("[exec] activate_deployment: activated");
      type Listed = { name: string; webhook_path: string; reuse_process?: boolean };
      const { triggers } = await call<{ triggers: Listed[] }>("get", "/triggers?project=shop");
      const paths = Object.fromEntries(triggers.map((t) => [t.name, t.webhook_path]));
      // The option shows where set, and only there.
      const reusing = triggers.filter((t) => t.reuse_process);
      expect(reusing.map((t) => t.name)).toEqual(["waiter"]);
      type Started = { session_id: string };
      const hit = async (path: string, init: RequestInit = { method: "POST" }) =>
        (await (await fetch(path, init)).json()) as Started;
      const ok = await hit(`${paths.order}/ok`, { method: "POST", body: "{}" });
      const failed = await hit(`${paths.order}/fail`);
      const waiting = await hit(paths.waiter!);
      await fetch(paths.source!, { method: "PUT", body: "a=1" }); // a call-less event
      for (const { session_id } of [ok, failed]) await hook.sessions.whenEnded(session_id);

      await call("get", "/projects");
      const { project } = await call<{ project: { id: string } }>("get", "/projects/shop");
      await call("get", `/projects/${project.id}`);
      await call("get", "/deployments");
      await call("get", "/deployments?project=shop");
      await call("get", "/triggers");
      await call("get", "/connections");
      await call("get", "/connections?project=shop");
      await call("get", "/envs");
      await call("put", "/envs/shop/vars/API_KEY", json({ value: "s3cret", secret: true }));
      await call("put", "/envs/shop/vars/PLAIN", json({ value: "x" }));
      expect(JSON.stringify(await call("get", "/envs/shop/vars"))).not.toContain("s3cret");
      await call("delete", "/envs/shop/vars/PLAIN");
      const big = { $int: "18446744073709551616" };
      const stored = await call("put", "/projects/shop/store/n", json({ value: { big } }));
      expect(stored).toMatchObject({ key: "n", value: { big }, published: false });
      await call("get", "/projects/shop/store/n");
      expect(await call("get", "/projects/shop/store")).toMatchObject({ keys: ["n"] });
      await call("delete", "/projects/shop/store/n");
      await call("get", "/sessions");
      await call("get", "/sessions?project=shop&state=completed&limit=5");
      // By trigger: with more (no total), and without (a total).
      const one = await call<object>("get", "/sessions?project=shop&trigger=order&limit=1");
      expect(one).toMatchObject({ more: true });
      expect(one).not.toHaveProperty("total");
      expect(await call("get", "/sessions?trigger=waiter")).toMatchObject({
        more: false,
        total: 1,
      });
      for (const id of [ok.session_id, failed.session_id, waiting.session_id]) {
        await call("get", `/sessions/${id}`);
        await call("get", `/sessions/${id}/log`);
        await call("get", `/sessions/${id}/prints`);
      }
      const log = await call<{ journal: unknown[] }>("get", `/sessions/${ok.session_id}/log`);
      expect(log.journal).toHaveLength(2);
      const events = await call<{ name: string }[]>("get", `/sessions/${ok.session_id}/watch`);
      expect(events.at(-1)?.name).toBe("end");
      const stopping = call("post", `/sessions/${waiting.session_id}/stop`);
      release();
      await stopping;
      await call("post", `/sessions/${ok.session_id}/stop`); // already ended: unchanged
      const listed = await call<{ events: { id: string }[] }>(
        "get",
        "/events?project=shop&limit=10",
      );
      expect(listed.events.length).toBe(4);
      const manual = await call<{ session: { id: string } }>(
        "post",
        "/projects/shop/sessions",
        json({ entrypoint: "handlers.py:on_manual", inputs: { n: 1 } }),
      );
      await hook.sessions.whenEnded(manual.session.id);
      await call("get", `/sessions/${manual.session.id}`);
      await call("post", `/sessions/${manual.session.id}/rerun`);
      await call("post", `/sessions/${ok.session_id}/rerun`);
      // A re-run of a trigger the project no longer has: 409.
      const without = MANIFEST.replace(/ {2}- name: order\n( {4}.*\n)+/, "");
      await call("post", "/deploy", deployBody(without, FILES));
      await call("post", `/sessions/${ok.session_id}/rerun`);
      await call("get", "/events");
      await call("get", `/events/${listed.events[0]!.id}`);
      await call("get", "/openapi.json", {}, false);
    });

    it("answers bad input as documented", async () => {
      const post = (body: string) => ({ headers: { "content-type": "application/json" }, body });
      await call("post", "/deploy", post("{not json"));
      await call("post", "/deploy", json({ manifest: "version: v9\n", files: {} }));
      await call("post", "/deploy", json({ manifest: "x", files: { "a.py": "%%%" } }));
      await call("post", "/deploy", deployBody(MANIFEST, {}));
      const files = { ...FILES, "big.bin": "\0".repeat(16 * 1024 * 1024 + 1) };
      await call("post", "/deploy", deployBody(MANIFEST, files));
      await call("post", "/deploy", deployBody(MANIFEST, { ...FILES, NO_PYTHON: "" }));
      await call("get", "/projects/nope");
      await call("get", "/deployments?project=nope");
      await call("get", "/triggers?project=nope");
      await call("get", "/connections?project=nope");
      await call("get", "/envs/env_nope/vars");
      await call("put", "/envs/shop/vars/PATH", json({ value: "x" }));
      await call("put", "/envs/shop/vars/1BAD", json({ value: "x" }));
      await call("put", "/envs/shop/vars/OK", json({ value: 1 }));
      await call("put", "/envs/nope/vars/OK", json({ value: "x" }));
      await call("delete", "/envs/shop/vars/MISSING");
      const long = "k".repeat(257);
      await call("get", "/projects/nope/store");
      await call("get", "/projects/shop/store/absent");
      await call("get", `/projects/shop/store/${long}`);
      await call("put", "/projects/shop/store/k", json({ nothing: 1 }));
      await call("put", "/projects/nope/store/k", json({ value: 1 }));
      await call("put", "/projects/shop/store/k", json({ value: "x".repeat(70_000) }));
      await call("delete", `/projects/shop/store/${long}`);
      await call("delete", "/projects/nope/store/k");
      await call("get", "/sessions?state=sleeping");
      await call("get", "/sessions?limit=0");
      await call("get", "/sessions?limit=2.5");
      await call("get", "/sessions?trigger=");
      await call("get", `/sessions?trigger=${"t".repeat(64)}`);
      await call("get", "/sessions?project=nope&trigger=order");
      await call("get", "/sessions?project=nope");
      await call("get", "/events?limit=1001");
      await call("get", "/events?project=nope");
      for (const sub of ["", "/log", "/prints", "/watch"])
        await call("get", `/sessions/ses_x${sub}`);
      await call("post", "/sessions/ses_x/stop");
      await call("post", "/sessions/ses_x/rerun");
      await call("post", "/sessions/ses_x/rerun?from=last");
      await call("get", "/events/evt_x");
      const run = (body: unknown, project = "shop") =>
        call("post", `/projects/${project}/sessions`, json(body));
      await run({ entrypoint: "handlers.py:missing" });
      await run({ entrypoint: "handlers.py:on_manual", inputs: [1] });
      await run({ entrypoint: "handlers.py:on_manual" }, "nope");
      // A project with no active deployment (none is left after a deploy; stored so here): 409.
      const shop = (await hook.stores.projects.byName("shop"))!;
      await hook.stores.projects.put({
        ...shop,
        project: { ...shop.project, active_deployment_id: null },
      });
      await run({ entrypoint: "handlers.py:on_manual" });
      await hook.stores.projects.put(shop);
    });

    it("answers a deploy's replay check as documented", async () => {
      await call("get", "/projects/shop/replay-check"); // none yet: 404
      const { triggers } = await call<{ triggers: { name: string; webhook_path: string }[] }>(
        "get",
        "/triggers?project=shop",
      );
      const hold = triggers.find((t) => t.name === "hold")!.webhook_path;
      const { session_id } = (await (await fetch(hold, { method: "POST" })).json()) as {
        session_id: string;
      };
      await expect
        .poll(async () => (await hook.stores.journals.list(session_id)).length)
        .toBeGreaterThan(0);
      const files = { ...FILES, DIVERGE: "" };
      const body = { ...JSON.parse(deployBody(MANIFEST, files).body as string), check_replay: 0 };
      const stopped = await call<{ replay_check: { outcome: string } }>(
        "post",
        "/deploy",
        json(body),
      );
      expect(stopped.replay_check.outcome).toBe("stopped");
      const latest = await call<{ replay_check: { diverging: { session_id: string }[] } }>(
        "get",
        "/projects/shop/replay-check",
      );
      expect(latest.replay_check.diverging[0]?.session_id).toBe(session_id);
      const forced = await call<{ replay_check: { outcome: string } }>(
        "post",
        "/deploy",
        json({ ...body, force: true }),
      );
      expect(forced.replay_check.outcome).toBe("forced");
      releaseHold();
      await hook.sessions.whenEnded(session_id);
    });

    it("refuses every route but the document itself without the token", async () => {
      for (const [template, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          const path = template.replaceAll(/\{\w+\}/g, "x");
          await call(method, path, method === "get" ? {} : json({}), false);
          const statuses = seen.get(op.operationId)!;
          expect(statuses.has(401) !== (template === "/openapi.json")).toBe(true);
        }
      }
    });

    // After the tests above (a file's tests run in order): what they provoked, route by route.
    it("saw every documented status of every route", () => {
      for (const item of Object.values(doc.paths)) {
        for (const op of Object.values(item)) {
          const statuses = seen.get(op.operationId) ?? new Set();
          for (const status of Object.keys(op.responses)) {
            expect(statuses.has(Number(status)), `${op.operationId} answered ${status}`).toBe(true);
          }
        }
      }
    });

    it("documents every route the app serves under /api/v1", () => {
      // Outside the API: health checks, metrics (docs/observability.md), webhooks
      // (docs/webhooks.md) and connections' inbound paths (docs/connections.md), listed so a new
      // one fails; `ALL /*` is the metrics and tracing middleware. The web UI (its pages and
      // forms, src/ui) is not part of the API.
      const outside = [
        "ALL /*",
        "ALL /inbound/:id",
        "ALL /inbound/:id/*",
        "ALL /webhooks/:id",
        "ALL /webhooks/:id/*",
        "GET /healthz",
        "GET /metrics",
        "GET /readyz",
        "GET /store/:project{prj_[a-z0-9]{26}}",
        "GET /store/:project{prj_[a-z0-9]{26}}/:key{.+}",
      ];
      const served = hook.app.routes.map((r) => `${r.method} ${r.path}`);
      const api = served.filter((r) => r.includes(`${BASE}/`) && r !== `ALL ${BASE}/*`);
      const ui = (r: string) => / \/ui(\/|$)/.test(r);
      expect(
        served.filter((r) => !api.includes(r) && r !== `ALL ${BASE}/*` && !ui(r)).sort(),
      ).toEqual(outside);
      for (const route of api) {
        const [method, path] = route.split(" ") as [string, string];
        const template = path.slice(BASE.length).replaceAll(/:(\w+)/g, "{$1}");
        const item = (doc.paths as Record<string, Record<string, unknown>>)[template];
        expect(item?.[method.toLowerCase()], `${route} is in the document`).toBeDefined();
      }
      const documented = Object.values(doc.paths).flatMap((item) => Object.keys(item));
      expect(api.length).toBe(documented.length);
    });
  });
}
