import { describe, expect, it } from "vitest";
import type { WebhookData } from "../src/model/records.ts";
import { deployBody, targets } from "./support/app.ts";
import { fakeRuntime } from "./support/fake-runtime.ts";
import { until } from "./support/until.ts";

const MANIFEST = `
version: v2
project:
  name: demo
vars:
  - name: GREETING
    value: hello
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_post
  - name: sync
    type: webhook
    call: handlers.py:on_sync
    is_sync: true
  - name: waiter
    type: webhook
    call: handlers.py:on_wait
  - name: source
    type: webhook
`;
const FILES = { "handlers.py": "def on_post(event):\n    pass\n" };

async function webhookPaths(fetch: (p: string, i?: RequestInit) => Promise<Response>) {
  const res = await fetch("/api/v1/triggers?project=demo");
  const { triggers } = (await res.json()) as { triggers: { name: string; webhook_path: string }[] };
  return Object.fromEntries(triggers.map((t) => [t.name, t.webhook_path]));
}

for (const target of targets) {
  describe(`routes (${target.name})`, () => {
    it("sends / to the web UI and answers /favicon.ico with an image", async () => {
      const { fetch } = await target.make(fakeRuntime().runtime);
      const root = await fetch("/", { redirect: "manual" });
      expect(root.status).toBe(302);
      expect(root.headers.get("location")).toBe("/ui");
      const icon = await fetch("/favicon.ico");
      expect(icon.status).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/svg+xml");
      expect(await icon.text()).toMatch(/^<svg [^>]*>.*<\/svg>$/);
      // Only the root moves: any other unknown path is still a 404.
      expect((await fetch("/nothing-here")).status).toBe(404);
    });

    it("deploys, answers 202 with ids, stores the event and a created session", async () => {
      const fake = fakeRuntime({ "handlers.py:on_post": () => {} });
      const { fetch, hook } = await target.make(fake.runtime);
      const res = await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      expect(res.status).toBe(200);
      const out = (await res.json()) as { lines: string[] };
      expect(out.lines[0]).toBe('[plan] project "demo": not found, will create');
      expect(out.lines).toContain('[plan] var "demo/GREETING": not found, will set');
      expect(out.lines.at(-1)).toBe("[exec] activate_deployment: activated");
      expect(out.lines.filter((l) => l.includes("webhook path is"))).toHaveLength(4);

      const paths = await webhookPaths(fetch);
      expect(paths.hook).toMatch(/^\/webhooks\/[0-9a-z]{26}$/);
      const hit = await fetch(`${paths.hook}/sub/path?a=1&a=2`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=ab" },
        body: JSON.stringify({ x: 1 }),
      });
      expect(hit.status).toBe(202);
      const ids = (await hit.json()) as { event_id: string; session_id: string };
      expect(ids.event_id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(ids.session_id).toMatch(/^ses_[0-9a-z]{26}$/);
      const event = (await hook.stores.events.get(ids.event_id))!;
      expect((event.data as WebhookData).url).toEqual({
        path: `${paths.hook}/sub/path`,
        query: { a: "1, 2" },
        path_suffix: "sub/path",
      });
      expect((event.data as WebhookData).headers["X-Hub-Signature-256"]).toBe("sha256=ab");
      expect((event.data as WebhookData).body.json).toEqual({ x: 1 });
      expect(Buffer.from((event.data as WebhookData).body.bytes, "base64").toString()).toBe(
        '{"x":1}',
      );
      const session = await hook.stores.sessions.get(ids.session_id);
      expect(session?.event_id).toBe(ids.event_id);
      // The session starts once the 202 has gone.
      await hook.sessions.whenEnded(ids.session_id);
      expect(fake.started[0]?.env).toEqual({ HOOKLINE_PROJECT: "demo", GREETING: "hello" });
    });

    it("gives path_suffix as AutoKitteh does: below the id, one slash dropped", async () => {
      const { fetch, hook } = await target.make(fakeRuntime().runtime);
      await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      const paths = await webhookPaths(fetch);
      const suffixes: Record<string, string> = {};
      for (const below of ["", "/", "/new", "/game/7/X", "/a/", "//a"]) {
        const hit = await fetch(`${paths.hook}${below}`, { method: "POST" });
        const { event_id } = (await hit.json()) as { event_id: string };
        const event = (await hook.stores.events.get(event_id))!;
        suffixes[below] = (event.data as WebhookData).url.path_suffix;
      }
      expect(suffixes).toEqual({
        "": "",
        "/": "",
        "/new": "new",
        "/game/7/X": "game/7/X",
        "/a/": "a/",
        "//a": "/a",
      });
    });

    it("filters by event_type, 404s unknown ids, 413s large bodies without storing", async () => {
      const fake = fakeRuntime({ "handlers.py:on_post": () => {} });
      const { fetch, hook } = await target.make(fake.runtime, {
        limits: { requests: { maxBody: 10 } },
      });
      await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      const paths = await webhookPaths(fetch);
      const get = await fetch(paths.hook!, { method: "GET" });
      expect(get.status).toBe(202);
      expect(((await get.json()) as { session_id: unknown }).session_id).toBeNull();
      const missing = await fetch("/webhooks/00000000000000000000000000", { method: "POST" });
      expect(missing.status).toBe(404);
      expect(missing.headers.get("content-type")).toContain("application/problem+json");
      const before = (await hook.stores.events.list()).length;
      const big = await fetch(paths.hook!, { method: "POST", body: "x".repeat(11) });
      expect(big.status).toBe(413);
      expect((await hook.stores.events.list()).length).toBe(before);
      const headers = { "x-big": "h".repeat(70 * 1024) };
      const huge = await fetch(paths.hook!, { method: "POST", headers }).catch(() => null);
      // In process our own check answers; over HTTP Node may refuse the headers first.
      if (huge) expect(huge.status).toBe(431);
      expect((await hook.stores.events.list()).length).toBe(before);
    });

    it("answers a sync webhook with the final outcome, 502 when none comes", async () => {
      const fake = fakeRuntime({
        "handlers.py:on_sync": (spec, host) => {
          if ((spec.event.data as WebhookData).url.path_suffix === "none") return;
          host.outcome({ status_code: 202, headers: {}, body: Buffer.from("partial"), more: true });
          host.outcome({
            status_code: 201,
            headers: { "X-Custom": "1" },
            body: Buffer.from("made"),
            more: false,
          });
          host.outcome({ status_code: 500, headers: {}, body: null, more: false });
        },
      });
      const { fetch } = await target.make(fake.runtime);
      await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      const paths = await webhookPaths(fetch);
      const res = await fetch(paths.sync!, { method: "POST", body: "{}" });
      expect(res.status).toBe(201);
      expect(res.headers.get("x-custom")).toBe("1");
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await res.text()).toBe("made");
      const none = await fetch(`${paths.sync}/none`, { method: "POST" });
      expect(none.status).toBe(502);
      expect(((await none.json()) as { state: string }).state).toBe("completed");
    });

    it("delivers later events to subscribers, with a timeout", async () => {
      const seen: unknown[] = [];
      const fake = fakeRuntime({
        "handlers.py:on_wait": async (_spec, host) => {
          const id = await host.subscribe("source", 'data.url.path.endsWith("/done")');
          const event = await host.nextEvent([id], 5000);
          seen.push((event?.data as WebhookData | undefined)?.url.path_suffix);
          seen.push(await host.nextEvent([id], 50));
          await expect(host.subscribe("nope", "")).rejects.toThrow(
            'source "nope" not found in this project',
          );
        },
      });
      const { fetch, hook } = await target.make(fake.runtime);
      await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      const paths = await webhookPaths(fetch);
      const started = (await (await fetch(paths.waiter!, { method: "POST" })).json()) as {
        session_id: string;
      };
      await until("the waiter to subscribe", async () => {
        const log = await fetch(`/api/v1/sessions/${started.session_id}/log`);
        const { entries } = (await log.json()) as { entries: { kind: string }[] };
        return entries.some((e) => e.kind === "subscribe");
      });
      await fetch(`${paths.source}/other`, { method: "POST" });
      await fetch(`${paths.source}/done`, { method: "POST" });
      const end = await hook.sessions.whenEnded(started.session_id);
      expect(end?.state).toBe("completed");
      expect(seen).toEqual(["done", null]);
    });

    it("keeps secrets out of responses and needs the token outside dev mode", async () => {
      const fake = fakeRuntime();
      const { fetch, hook } = await target.make(fake.runtime, { access: { apiToken: "t0ken" } });
      const denied = await fetch("/api/v1/projects");
      expect(denied.status).toBe(401);
      // A well-formed bearer token that is not the token: refused, whatever its length or case.
      for (const wrong of ["Bearer t0ke", "Bearer t0ken2", "bearer T0KEN", "Bearer x"]) {
        const res = await fetch("/api/v1/projects", { headers: { authorization: wrong } });
        expect(res.status, wrong).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="hookline"');
      }
      expect(
        (await fetch("/api/v1/projects", { headers: { authorization: "t0ken" } })).status,
      ).toBe(401);
      const allowed = await fetch("/api/v1/projects", {
        headers: { authorization: "bearer t0ken" },
      });
      expect(allowed.status).toBe(200);
      const auth = { authorization: "Bearer t0ken", "content-type": "application/json" };
      const deployed = await fetch("/api/v1/deploy", {
        ...deployBody(MANIFEST, FILES),
        headers: auth,
      });
      expect(deployed.status).toBe(200);
      const set = await fetch("/api/v1/envs/demo/vars/TOKEN", {
        method: "PUT",
        headers: auth,
        body: JSON.stringify({ value: "s3cret-value", secret: true }),
      });
      expect(set.status).toBe(200);
      // At rest the value is AES-GCM ciphertext, never the secret itself.
      const stored = (await hook.stores.projects.byName("demo"))!.vars.find(
        (v) => v.name === "TOKEN",
      )!;
      expect(stored.value).not.toContain("s3cret-value");
      expect(stored.value).toMatch(/^v1:/);
      const list = await (await fetch("/api/v1/envs/demo/vars", { headers: auth })).text();
      expect(list).not.toContain("s3cret-value");
      expect(list).toContain("********");
      const bad = await fetch("/api/v1/envs/demo/vars/PATH", {
        method: "PUT",
        headers: auth,
        body: JSON.stringify({ value: "x" }),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { detail: string }).detail).toContain("reserved");
      const spec = await fetch("/api/v1/openapi.json");
      expect(spec.status).toBe(200);
    });
  });
}
