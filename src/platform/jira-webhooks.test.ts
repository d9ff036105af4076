import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLOUD_ID, type StandInAtlassian, standInAtlassian } from "../../test/support/atlassian.ts";
import { manualClock } from "../../test/support/clock.ts";
import { WEBHOOK_LIFE_MS } from "../connections/jira-atlassian.ts";
import { keyedLock } from "../locks.ts";
import { silentLogger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import { createSecretBox } from "../secrets.ts";
import { jiraWebhookKeeper, SWEEP_MS } from "./jira-webhooks.ts";

/**
 * The keeper over a project store and a stand-in Atlassian: a change registers the webhook and
 * saves its vars; the hourly sweep, claimed once across instances, renews it within two weeks
 * of its expiry.
 */
const TOKEN = "oauth-access-2";
const DAY = 24 * 3600_000;
const secrets = createSecretBox(randomBytes(32));
let atl: StandInAtlassian;
beforeAll(async () => {
  atl = await standInAtlassian(TOKEN);
});
afterAll(() => atl.close());

const v = (name: string, value: string, secret = false) => ({
  env_id: "env_1",
  name: `jira__${name}`,
  value: secret ? secrets.seal(value) : value,
  secret,
  source: "cli" as const,
  updated_at: "2026-11-28T00:00:00Z",
});

/** One project with a jira connection holding OAuth vars, in a store of one; a fleet's claims. */
function world(clock: ReturnType<typeof manualClock>) {
  const doc = {
    project: { id: "prj_1", name: "triage", active_deployment_id: "dep_1" },
    env: { id: "env_1" },
    triggers: [],
    vars: [v("oauth_AccessToken", TOKEN, true), v("auth_type", "oauth")],
    connections: [{ id: "con_1", name: "jira", integration: "jira", inbound_id: "in1" }],
  } as unknown as ProjectDoc;
  let stored = structuredClone(doc);
  const projects = {
    get: async () => structuredClone(stored),
    list: async () => [structuredClone(stored)],
    put: async (d: ProjectDoc) => {
      stored = structuredClone(d);
    },
  };
  const claims = new Map<string, number>();
  const cluster = {
    once: async (key: string, ttl: number) => {
      if ((claims.get(key) ?? 0) > clock.now()) return false;
      claims.set(key, clock.now() + ttl);
      return true;
    },
  };
  const changes: string[] = [];
  const keeper = (accessToken?: () => Promise<string>, log = silentLogger) =>
    jiraWebhookKeeper({
      projects: {
        stores: { projects } as never,
        secrets,
        locks: keyedLock(),
        changed: (id) => void changes.push(id),
      },
      cluster,
      publicUrl: () => "https://hooks.example.com",
      log,
      clock,
      atlassian: { apiUrl: atl.url, accessToken },
    });
  const varOf = (name: string) => stored.vars.find((x) => x.name === `jira__${name}`)?.value;
  /** The project redeployed without its jira connection (its cli-set vars stay, as a deploy keeps them). */
  const removeConnection = () => {
    stored = { ...stored, connections: [] };
  };
  return { keeper, varOf, changes, stored: () => stored, removeConnection };
}

describe("jira webhook keeper", () => {
  it("registers at a change, saves the vars, and keeps them at the next change", async () => {
    atl.calls.length = 0;
    atl.webhooks.length = 0;
    const clock = manualClock(Date.now());
    const w = world(clock);
    const keeper = w.keeper();
    keeper.changed("prj_1");
    await keeper.idle();
    expect(w.varOf("WebhookID")).toBe("1000");
    expect(w.varOf("AccessID")).toBe(CLOUD_ID);
    expect(atl.webhooks[0]!.url).toBe("https://hooks.example.com/inbound/in1");
    expect(w.changes).toEqual(["prj_1"]);
    // Saved plain, as AutoKitteh saves them, and kept across redeploys (source cli).
    expect(w.stored().vars.find((x) => x.name === "jira__WebhookID")).toMatchObject({
      secret: false,
      source: "cli",
    });
    const before = atl.calls.length;
    keeper.changed("prj_1");
    await keeper.idle();
    expect(atl.calls.length).toBe(before);
    expect(await keeper.ensure("prj_1", "nope")).toMatchObject({ action: "skipped" });
    keeper.dispose();
  });

  it("renews in the hourly sweep once the expiry is two weeks away, on one instance of two", async () => {
    atl.calls.length = 0;
    atl.webhooks.length = 0;
    const clock = manualClock(Date.now());
    atl.now = () => clock.now();
    const w = world(clock);
    const [a, b] = [w.keeper(), w.keeper()];
    a.start();
    b.start();
    await a.idle();
    await b.idle();
    // The first sweep registered it, once, though both instances started.
    expect(atl.calls.filter((c) => c.method === "POST")).toHaveLength(1);
    const expires = Date.parse(w.varOf("WebhookExpiration")!);
    expect(expires).toBeGreaterThan(clock.now() + WEBHOOK_LIFE_MS - 60_000);
    // Fifteen days on, hour by hour: nothing until two weeks are left, then one refresh.
    for (let h = 0; h < 17 * 24 && !atl.calls.some((c) => c.method === "PUT"); h++) {
      await clock.advance(SWEEP_MS);
      await a.idle();
      await b.idle();
    }
    const puts = atl.calls.filter((c) => c.method === "PUT");
    expect(puts).toHaveLength(1);
    const renewedAt = clock.now();
    expect(expires - renewedAt).toBeLessThanOrEqual(14 * DAY);
    expect(expires - renewedAt).toBeGreaterThan(14 * DAY - SWEEP_MS - 1000);
    expect(Date.parse(w.varOf("WebhookExpiration")!)).toBeGreaterThan(expires);
    a.dispose();
    b.dispose();
    atl.now = Date.now;
  });

  it("calls Atlassian with the token the OAuth refresher hands it, not a stale stored one", async () => {
    atl.calls.length = 0;
    atl.webhooks.length = 0;
    atl.token = "refreshed-token"; // the stored one has expired
    const w = world(manualClock(Date.now()));
    const stale = w.keeper();
    const r = await stale.ensure("prj_1", "jira");
    expect(r).toMatchObject({ action: "failed", set: {} });
    expect(r.detail).toContain("the OAuth token was refused");
    expect(w.varOf("WebhookID")).toBeUndefined();
    const asked: string[] = [];
    const fresh = w.keeper(async () => {
      asked.push("asked");
      return "refreshed-token";
    });
    expect(await fresh.ensure("prj_1", "jira")).toMatchObject({ action: "registered" });
    expect(asked).toEqual(["asked"]);
    expect(w.varOf("WebhookID")).toBe("1000");
    // A refresher that fails (invalid_grant) makes a failed result, not a thrown sweep.
    const broken = w.keeper(async () => {
      throw new Error("jira has no refresh token: authorize it again");
    });
    expect(await broken.ensure("prj_1", "jira")).toMatchObject({
      action: "failed",
      detail: "jira has no refresh token: authorize it again",
    });
    await broken.dispose();
    atl.token = TOKEN;
    await stale.dispose();
    await fresh.dispose();
  });

  it("deletes the webhook of a removed connection at Jira and clears its webhook vars", async () => {
    atl.calls.length = 0;
    atl.webhooks.length = 0;
    const w = world(manualClock(Date.now()));
    const keeper = w.keeper();
    keeper.changed("prj_1");
    await keeper.idle();
    expect(atl.webhooks.map((h) => h.id)).toEqual([1000]);
    w.removeConnection();
    keeper.changed("prj_1");
    await keeper.idle();
    expect(atl.calls.filter((c) => c.method === "DELETE")).toEqual([
      {
        method: "DELETE",
        path: `/ex/jira/${CLOUD_ID}/rest/api/3/webhook`,
        body: { webhookIds: [1000] },
        authorized: true,
      },
    ]);
    expect(atl.webhooks).toEqual([]);
    expect(["WebhookID", "WebhookExpiration", "WebhookKey"].map(w.varOf)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // The token stays (the user's to remove); nothing more is asked at the next change.
    expect(w.varOf("oauth_AccessToken")).toBeDefined();
    keeper.changed("prj_1");
    await keeper.idle();
    expect(atl.calls.filter((c) => c.method === "DELETE")).toHaveLength(1);
    await keeper.dispose();
  });

  it("logs a deletion Atlassian refuses, and goes on", async () => {
    atl.calls.length = 0;
    atl.webhooks.length = 0;
    const w = world(manualClock(Date.now()));
    const warned: string[] = [];
    const log = { ...silentLogger, warn: (m: string) => void warned.push(m) };
    const keeper = w.keeper(undefined, log);
    keeper.changed("prj_1");
    await keeper.idle();
    w.removeConnection();
    atl.token = "revoked"; // the stored token is refused
    keeper.changed("prj_1");
    await keeper.idle();
    atl.token = TOKEN;
    expect(warned).toEqual([
      expect.stringMatching(
        /^jira connection triage\/jira \(removed\): webhook 1000 not deleted at Jira \(Atlassian answered 401.*\): delete it there$/,
      ),
    ]);
    expect(atl.webhooks).toHaveLength(1);
    expect(w.varOf("WebhookID")).toBeUndefined();
    await keeper.dispose();
  });
});
