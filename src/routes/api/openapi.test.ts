import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../../test/support/app.ts";
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
 * bad input, each answer must have the status the call expects, documented for its route, a
 * documented media type and a body that the document's schema for that status accepts; those
 * calls bring up every documented status, and every route the app serves must be documented.
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
  "handlers.py":
    "def on_order(event):\n    pass\n\ndef on_manual(event):\n    pass\n\ndef on_hold(event):\n    pass\n",
};
const TOKEN = "t0ken";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const BASE = "/api/v1";

/**
 * One app of `target` with the shop's handlers, and `call`: a request that must answer exactly
 * `status`, a status the document lists for its route, with a body its schema accepts. `seen`
 * keeps the statuses answered per operation.
 */
async function apiOf(target: (typeof targets)[number]) {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  let releaseHold: () => void = () => {};
  const holdReleased = new Promise<void>((r) => (releaseHold = r));
  const fake = fakeRuntime({
    "handlers.py:on_order": async (spec, wf) => {
      wf.print("got an order", "stdout");
      await wf.activity("shop.charge", () => "charged");
      wf.outcome({ status_code: 201, headers: {}, body: Buffer.from("ok"), more: false });
      if ((spec.event.data as WebhookData).url.path_suffix === "fail")
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
      if (!spec.check || !("DIVERGE" in build.files)) return fake.runtime.run(spec, build, host);
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
  const { fetch, hook } = await target.make(runtime, { access: { apiToken: TOKEN } });
  const doc = (await (await fetch(`${BASE}/openapi.json`)).json()) as Doc;
  const validator = compileDocument(doc);
  const seen = new Map<string, Set<number>>();

  async function call<T = unknown>(
    status: number,
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
    const where = `${method.toUpperCase()} ${path.slice(0, 120)} → ${res.status}`;
    const text = await res.text();
    expect(res.status, `${where}, expected ${status}: ${text.slice(0, 300)}`).toBe(status);
    const answer = op.responses[String(res.status)];
    expect(answer, `${where} is a documented status`).toBeDefined();
    seen.set(op.operationId, (seen.get(op.operationId) ?? new Set()).add(res.status));
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
        const at = ["paths", template, method, "responses", "200", "x-events", e.name];
        const check = validator(at);
        expect(check(e.data), `${where} event ${e.name}: ${ajvErrors(check)}`).toBe(true);
      }
      return events as T;
    }
    const body = JSON.parse(text) as unknown;
    const at = ["paths", template, method, "responses", String(res.status), "content", type!];
    const check = validator([...at, "schema"]);
    expect(check(body), `${where}: ${ajvErrors(check)}\n${text.slice(0, 500)}`).toBe(true);
    return body as T;
  }
  return { call, fetch, hook, doc, seen, release, releaseHold };
}
type Api = Awaited<ReturnType<typeof apiOf>>;

const json = (body: unknown): RequestInit => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** Every route called with good input: deploy, webhooks, then every read and change. */
async function goodInput({ call, fetch, hook, release }: Api) {
  const deployed = await call<{ lines: string[] }>(
    200,
    "post",
    "/deploy",
    deployBody(MANIFEST, FILES),
  );
  expect(deployed.lines.at(-1)).toBe("[exec] activate_deployment: activated");
  type Listed = { name: string; webhook_path: string; reuse_process?: boolean };
  const { triggers } = await call<{ triggers: Listed[] }>(200, "get", "/triggers?project=shop");
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

  await call(200, "get", "/projects");
  const { project } = await call<{ project: { id: string } }>(200, "get", "/projects/shop");
  await call(200, "get", `/projects/${project.id}`);
  await call(200, "get", "/deployments");
  await call(200, "get", "/deployments?project=shop");
  await call(200, "get", "/triggers");
  await call(200, "get", "/connections");
  await call(200, "get", "/connections?project=shop");
  await call(200, "get", "/envs");
  await call(200, "put", "/envs/shop/vars/API_KEY", json({ value: "s3cret", secret: true }));
  await call(200, "put", "/envs/shop/vars/PLAIN", json({ value: "x" }));
  expect(JSON.stringify(await call(200, "get", "/envs/shop/vars"))).not.toContain("s3cret");
  await call(204, "delete", "/envs/shop/vars/PLAIN");
  const big = { $int: "18446744073709551616" };
  const stored = await call(200, "put", "/projects/shop/store/n", json({ value: { big } }));
  expect(stored).toMatchObject({ key: "n", value: { big }, published: false });
  await call(200, "get", "/projects/shop/store/n");
  expect(await call(200, "get", "/projects/shop/store")).toMatchObject({ keys: ["n"] });
  await call(204, "delete", "/projects/shop/store/n");
  await call(200, "get", "/sessions");
  await call(200, "get", "/sessions?project=shop&state=completed&limit=5");
  // By trigger: with more (no total), and without (a total).
  const one = await call<object>(200, "get", "/sessions?project=shop&trigger=order&limit=1");
  expect(one).toMatchObject({ more: true });
  expect(one).not.toHaveProperty("total");
  expect(await call(200, "get", "/sessions?trigger=waiter")).toMatchObject({
    more: false,
    total: 1,
  });
  for (const id of [ok.session_id, failed.session_id, waiting.session_id]) {
    await call(200, "get", `/sessions/${id}`);
    await call(200, "get", `/sessions/${id}/log`);
    await call(200, "get", `/sessions/${id}/prints`);
  }
  const log = await call<{ journal: unknown[] }>(200, "get", `/sessions/${ok.session_id}/log`);
  expect(log.journal).toHaveLength(2);
  const events = await call<{ name: string }[]>(200, "get", `/sessions/${ok.session_id}/watch`);
  expect(events.at(-1)?.name).toBe("end");
  const stopping = call(200, "post", `/sessions/${waiting.session_id}/stop`);
  release();
  await stopping;
  await call(200, "post", `/sessions/${ok.session_id}/stop`); // already ended: unchanged
  const listed = await call<{ events: { id: string }[] }>(
    200,
    "get",
    "/events?project=shop&limit=10",
  );
  expect(listed.events.length).toBe(4);
  const manual = await call<{ session: { id: string } }>(
    201,
    "post",
    "/projects/shop/sessions",
    json({ entrypoint: "handlers.py:on_manual", inputs: { n: 1 } }),
  );
  await hook.sessions.whenEnded(manual.session.id);
  await call(200, "get", `/sessions/${manual.session.id}`);
  await call(201, "post", `/sessions/${manual.session.id}/rerun`);
  await call(201, "post", `/sessions/${ok.session_id}/rerun`);
  // A re-run of a trigger the project no longer has: 409.
  const without = MANIFEST.replace(/ {2}- name: order\n( {4}.*\n)+/, "");
  await call(200, "post", "/deploy", deployBody(without, FILES));
  await call(409, "post", `/sessions/${ok.session_id}/rerun`);
  await call(200, "get", "/events");
  await call(200, "get", `/events/${listed.events[0]!.id}`);
  await call(200, "get", "/openapi.json", {}, false);
}

/** Every route called with bad input, on a project deployed first: each refusal's own status. */
async function badInput({ call, hook }: Api) {
  await call(200, "post", "/deploy", deployBody(MANIFEST, FILES));
  const post = (body: string) => ({ headers: { "content-type": "application/json" }, body });
  await call(400, "post", "/deploy", post("{not json"));
  await call(422, "post", "/deploy", json({ manifest: "version: v9\n", files: {} }));
  await call(400, "post", "/deploy", json({ manifest: "x", files: { "a.py": "%%%" } }));
  await call(422, "post", "/deploy", deployBody(MANIFEST, {})); // its handlers.py missing
  const files = { ...FILES, "big.bin": "\0".repeat(16 * 1024 * 1024 + 1) };
  await call(413, "post", "/deploy", deployBody(MANIFEST, files));
  await call(503, "post", "/deploy", deployBody(MANIFEST, { ...FILES, NO_PYTHON: "" }));
  await call(404, "get", "/projects/nope");
  await call(404, "get", "/deployments?project=nope");
  await call(404, "get", "/triggers?project=nope");
  await call(404, "get", "/connections?project=nope");
  await call(404, "get", "/envs/env_nope/vars");
  await call(400, "put", "/envs/shop/vars/PATH", json({ value: "x" }));
  await call(400, "put", "/envs/shop/vars/1BAD", json({ value: "x" }));
  await call(400, "put", "/envs/shop/vars/OK", json({ value: 1 }));
  await call(404, "put", "/envs/nope/vars/OK", json({ value: "x" }));
  await call(404, "delete", "/envs/shop/vars/MISSING");
  const long = "k".repeat(257);
  await call(404, "get", "/projects/nope/store");
  await call(404, "get", "/projects/shop/store/absent");
  await call(400, "get", `/projects/shop/store/${long}`);
  await call(400, "put", "/projects/shop/store/k", json({ nothing: 1 }));
  await call(404, "put", "/projects/nope/store/k", json({ value: 1 }));
  await call(413, "put", "/projects/shop/store/k", json({ value: "x".repeat(70_000) }));
  await call(400, "delete", `/projects/shop/store/${long}`);
  await call(404, "delete", "/projects/nope/store/k");
  await call(400, "get", "/sessions?state=sleeping");
  await call(400, "get", "/sessions?limit=0");
  await call(400, "get", "/sessions?limit=2.5");
  await call(400, "get", "/sessions?trigger=");
  await call(400, "get", `/sessions?trigger=${"t".repeat(64)}`);
  await call(404, "get", "/sessions?project=nope&trigger=order");
  await call(404, "get", "/sessions?project=nope");
  await call(400, "get", "/events?limit=1001");
  await call(404, "get", "/events?project=nope");
  for (const sub of ["", "/log", "/prints", "/watch"])
    await call(404, "get", `/sessions/ses_x${sub}`);
  await call(404, "post", "/sessions/ses_x/stop");
  await call(404, "post", "/sessions/ses_x/rerun");
  await call(400, "post", "/sessions/ses_x/rerun?from=last");
  await call(404, "get", "/events/evt_x");
  const run = (status: number, body: unknown, project = "shop") =>
    call(status, "post", `/projects/${project}/sessions`, json(body));
  await run(400, { entrypoint: "handlers.py:missing" });
  await run(400, { entrypoint: "handlers.py:on_manual", inputs: [1] });
  await run(404, { entrypoint: "handlers.py:on_manual" }, "nope");
  // A project with no active deployment (none is left after a deploy; stored so here): 409.
  const shop = (await hook.stores.projects.byName("shop"))!;
  await hook.stores.projects.put({
    ...shop,
    project: { ...shop.project, active_deployment_id: null },
  });
  await run(409, { entrypoint: "handlers.py:on_manual" });
  await hook.stores.projects.put(shop);
}

/**
 * A deploy's replay check: none yet (404); a durable session in flight that the new build's
 * code diverges from stops the deploy (409) and is the project's latest report (200); `force`
 * deploys over it.
 */
async function replayCheck({ call, fetch, hook, releaseHold }: Api) {
  await call(200, "post", "/deploy", deployBody(MANIFEST, FILES));
  await call(404, "get", "/projects/shop/replay-check");
  const { triggers } = await call<{ triggers: { name: string; webhook_path: string }[] }>(
    200,
    "get",
    "/triggers?project=shop",
  );
  const hold = triggers.find((t) => t.name === "hold")!.webhook_path;
  const res = await fetch(hold, { method: "POST" });
  const { session_id } = (await res.json()) as { session_id: string };
  await expect
    .poll(async () => (await hook.stores.journals.list(session_id)).length)
    .toBeGreaterThan(0);
  const body = { ...JSON.parse(deployBody(MANIFEST, { ...FILES, DIVERGE: "" }).body as string) };
  const stopped = await call<{ replay_check: { outcome: string } }>(
    409,
    "post",
    "/deploy",
    json({ ...body, check_replay: 0 }),
  );
  expect(stopped.replay_check.outcome).toBe("stopped");
  const latest = await call<{ replay_check: { diverging: { session_id: string }[] } }>(
    200,
    "get",
    "/projects/shop/replay-check",
  );
  expect(latest.replay_check.diverging[0]?.session_id).toBe(session_id);
  const forced = await call<{ replay_check: { outcome: string } }>(
    200,
    "post",
    "/deploy",
    json({ ...body, check_replay: 0, force: true }),
  );
  expect(forced.replay_check.outcome).toBe("forced");
  releaseHold();
  await hook.sessions.whenEnded(session_id);
}

/** Every documented route without the token: 401, but the document itself. */
async function noToken({ call, doc }: Api) {
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) {
      const path = template.replaceAll(/\{\w+\}/g, "x");
      const status = template === "/openapi.json" ? 200 : 401;
      await call(status, method, path, method === "get" ? {} : json({}), false);
    }
  }
}

for (const target of targets) {
  describe(`openapi.json against the app (${target.name})`, () => {
    // Each test makes its own app: none depends on another having run first.
    it("answers good input as documented", async () => {
      await goodInput(await apiOf(target));
    });

    it("answers bad input as documented", async () => {
      await badInput(await apiOf(target));
    });

    it("refuses every route but the document itself without the token", async () => {
      await noToken(await apiOf(target));
    });

    it("answers a deploy's replay check as documented", async () => {
      await replayCheck(await apiOf(target));
    });

    it("documents every route the app serves under /api/v1", async () => {
      const { hook, doc } = await apiOf(target);
      // Outside the API: health checks, metrics (docs/observability.md), webhooks
      // (docs/webhooks.md), connections' inbound paths and Gmail's and Forms' Pub/Sub pushes
      // (docs/connections.md) and the OAuth
      // authorization's start and callback (docs/oauth.md, pages for a browser), listed so a new
      // one fails; `ALL /*` is the metrics and tracing middleware; `/` sends a browser to the web
      // UI and `/favicon.ico` is its icon. The web UI (its pages and
      // forms, src/ui) is not part of the API.
      const outside = [
        "ALL /*",
        "ALL /inbound/:id",
        "ALL /inbound/:id/*",
        "ALL /webhooks/:id",
        "ALL /webhooks/:id/*",
        "GET /",
        "GET /favicon.ico",
        "GET /healthz",
        "GET /metrics",
        "GET /oauth/redirect/:integration",
        "GET /oauth/start/:integration",
        "GET /readyz",
        "GET /store/:project{prj_[a-z0-9]{26}}",
        "GET /store/:project{prj_[a-z0-9]{26}}/:key{.+}",
        "POST /google/pubsub/:kind",
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

// The app decides the statuses, not the transport: the first target is enough here.
describe("openapi.json: every documented status comes up", () => {
  it("every documented status of every route comes of good input, bad input, no token or a replay check", async () => {
    const seen = new Map<string, Set<number>>();
    for (const flow of [goodInput, badInput, noToken, replayCheck]) {
      const api = await apiOf(targets[0]!);
      await flow(api);
      for (const [op, statuses] of api.seen) {
        for (const s of statuses) seen.set(op, (seen.get(op) ?? new Set()).add(s));
      }
    }
    const { doc } = await apiOf(targets[0]!);
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        const statuses = seen.get(op.operationId) ?? new Set();
        for (const status of Object.keys(op.responses)) {
          expect(statuses.has(Number(status)), `${op.operationId} answered ${status}`).toBe(true);
        }
      }
    }
  }, 60_000);
});
