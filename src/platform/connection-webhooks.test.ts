import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keyedLock } from "../locks.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import { createSecretBox } from "../secrets.ts";
import { hookKeeper } from "./connection-webhooks.ts";

/**
 * The keeper over a project store of one and a fetch that records: a confluence connection
 * authorized with OAuth alone registers nothing and says why; with a token it registers the
 * nine webhooks once across instances, their secrets sealed.
 */
const secrets = createSecretBox(randomBytes(32));
const v = (name: string, value: string, secret = false) => ({
  env_id: "env_1",
  name: `conf__${name}`,
  value: secret ? secrets.seal(value) : value,
  secret,
  source: "cli" as const,
  updated_at: "2026-12-06T00:00:00Z",
});

function world(vars: ReturnType<typeof v>[]) {
  let stored = {
    project: { id: "prj_1", name: "wiki", active_deployment_id: "dep_1" },
    env: { id: "env_1" },
    triggers: [],
    vars,
    connections: [{ id: "con_1", name: "conf", integration: "confluence", inbound_id: "in1" }],
  } as unknown as ProjectDoc;
  const projects = {
    get: async () => structuredClone(stored),
    list: async () => [structuredClone(stored)],
    put: async (d: ProjectDoc) => {
      stored = structuredClone(d);
    },
  };
  const claims = new Set<string>();
  const cluster = { once: async (key: string) => !claims.has(key) && Boolean(claims.add(key)) };
  const calls: string[] = [];
  let next = 1;
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push(`${init.method} ${new URL(url).pathname}`);
    const auth = (init.headers as Record<string, string>).authorization ?? "";
    if (!auth.startsWith("Basic ")) return new Response("{}", { status: 401 });
    const self = `https://example.atlassian.net/wiki/rest/webhooks/1.0/webhook/${next++}`;
    const body = init.method === "POST" ? { self } : [];
    return new Response(JSON.stringify(body), { status: init.method === "POST" ? 201 : 200 });
  }) as typeof globalThis.fetch;
  const keeper = (log: Logger = silentLogger) =>
    hookKeeper({
      projects: { stores: { projects } as never, secrets, locks: keyedLock(), changed: () => {} },
      cluster,
      publicUrl: () => "https://hooks.example.com",
      log,
      fetch,
    });
  const add = (x: ReturnType<typeof v>) => {
    stored = { ...stored, vars: [...stored.vars, x] };
  };
  return { keeper, calls, stored: () => stored, add };
}

describe("the Confluence and Telegram webhook keeper", () => {
  it("registers nothing for a confluence connection authorized with OAuth alone, and warns why", async () => {
    const w = world([v("oauth_AccessToken", "oauth-t", true), v("AccessID", "cloud-1")]);
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (m: string) => void warnings.push(m) };
    const result = await w.keeper(log).ensure("prj_1", "conf");
    expect(result?.action).toBe("failed");
    expect(w.calls).toEqual([]);
    expect(warnings).toEqual([
      expect.stringContaining(
        "confluence connection wiki/conf: webhook not registered: Confluence registers webhooks only with an API token",
      ),
    ]);
  });

  it("registers the nine webhooks once with a token, however many instances are told", async () => {
    const w = world([
      v("BaseURL", "https://example.atlassian.net"),
      v("Email", "me@example.com"),
      v("Token", "api-t", true),
    ]);
    const [a, b] = [w.keeper(), w.keeper()];
    await Promise.all([a.ensure("prj_1", "conf"), b.ensure("prj_1", "conf")]);
    expect(w.calls.filter((c) => c.startsWith("POST"))).toHaveLength(9);
    const saved = w.stored().vars.filter((x) => x.name.startsWith("conf__Webhook"));
    expect(saved).toHaveLength(18);
    const secret = saved.find((x) => x.name === "conf__WebhookSecret_created")!;
    expect(secret.secret).toBe(true);
    expect(secrets.open(secret.value)).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.find((x) => x.name === "conf__WebhookID_created")?.secret).toBe(false);
  });

  it("calls the webhook resource under the site's /wiki whether the site var names the wiki or not", async () => {
    const w = world([
      v("BaseURL", "https://example.atlassian.net/wiki/"),
      v("Email", "me@example.com"),
      v("Token", "api-t", true),
    ]);
    expect((await w.keeper().ensure("prj_1", "conf"))?.action).toBe("registered");
    expect(new Set(w.calls.map((c) => c.split(" ")[1]))).toEqual(
      new Set(["/wiki/rest/webhooks/1.0/webhook"]),
    );
  });

  it("tries again at once when a credential it lacked is set (the Email after the Token)", async () => {
    const w = world([v("BaseURL", "https://example.atlassian.net"), v("Token", "api-t", true)]);
    const keeper = w.keeper();
    expect((await keeper.ensure("prj_1", "conf"))?.action).toBe("failed"); // a PAT: refused
    w.add(v("Email", "me@example.com"));
    expect((await keeper.ensure("prj_1", "conf"))?.action).toBe("registered");
  });
});
