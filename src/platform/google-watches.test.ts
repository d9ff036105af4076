import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandInGoogle, standInGoogle } from "../../test/support/google-api.ts";
import { keyedLock } from "../locks.ts";
import { silentLogger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import { createSecretBox } from "../secrets.ts";
import { googleWatchKeeper } from "./google-watches.ts";

/**
 * The keeper over a project store of one, a fleet's claims and a stand-in Calendar API: a
 * channel Google refused is tried again at the next look (its claim let go), and one made is
 * not made again while it is not due; a read's cursor moves on only once its events are stored.
 */
const TOKEN = "google-access-1";
const secrets = createSecretBox(randomBytes(32));
let google: StandInGoogle;
beforeAll(async () => {
  google = await standInGoogle(TOKEN);
});
afterAll(() => google.close());

function world(fetch?: typeof globalThis.fetch) {
  const v = (name: string, value: string, secret = false) => ({
    env_id: "env_1",
    name: `cal__${name}`,
    value: secret ? secrets.seal(value) : value,
    secret,
    source: "cli" as const,
    updated_at: new Date().toISOString(),
  });
  let stored = {
    project: { id: "prj_1", name: "p", active_deployment_id: "dep_1" },
    env: { id: "env_1" },
    triggers: [],
    vars: [v("oauth_AccessToken", TOKEN, true), v("base_url", google.url)],
    connections: [{ id: "con_1", name: "cal", integration: "googlecalendar", inbound_id: "in1" }],
  } as unknown as ProjectDoc;
  const projects = {
    get: async () => structuredClone(stored),
    list: async () => [structuredClone(stored)],
    put: async (d: ProjectDoc) => {
      stored = structuredClone(d);
    },
  };
  const claims = new Set<string>();
  const cluster = {
    once: async (key: string) => !claims.has(key) && Boolean(claims.add(key)),
    forget: async (key: string) => void claims.delete(key),
  };
  const keeper = googleWatchKeeper({
    projects: { stores: { projects } as never, secrets, locks: keyedLock(), changed: () => {} },
    cluster,
    publicUrl: () => "https://hooks.example.com",
    log: silentLogger,
    google: { fetch },
  });
  const varOf = (name: string) => stored.vars.find((x) => x.name === `cal__${name}`)?.value;
  return { keeper, varOf };
}

describe("googleWatchKeeper", () => {
  it("tries a refused channel again at the next look, and keeps one made", async () => {
    const { keeper, varOf } = world();
    google.accepts = () => false;
    expect(await keeper.ensure("prj_1", "cal")).toMatchObject({ action: "failed" });
    expect(varOf("CalendarEventsWatchID")).toBeUndefined();
    google.accepts = (t) => t === TOKEN;
    expect(await keeper.ensure("prj_1", "cal")).toMatchObject({ action: "created" });
    expect(google.channels).toHaveLength(1);
    expect(google.channels[0]!.address).toBe("https://hooks.example.com/inbound/in1");
    expect(varOf("CalendarEventsWatchID")).toBe(google.channels[0]!.id);
    expect(await keeper.ensure("prj_1", "cal")).toBeNull(); // not due: no call, nothing saved
    expect(google.channels).toHaveLength(1);
    await keeper.dispose();
  });
});

/** Calendar as Google answers a sync token: `sync-1` holds one change, then `sync-2`. */
const calendar: typeof fetch = async (url, init) => {
  const u = new URL(String(url));
  const json = (body: unknown) => new Response(JSON.stringify(body));
  if (u.pathname.endsWith("/events/watch")) {
    const { id } = JSON.parse(String(init?.body)) as { id: string };
    return json({ id, resourceId: "r1", expiration: String(Date.now() + 3600_000) });
  }
  const token = u.searchParams.get("syncToken");
  if (token === "sync-1") {
    return json({
      items: [{ id: "e1", status: "confirmed", sequence: 0 }],
      nextSyncToken: "sync-2",
    });
  }
  return json({ items: [], nextSyncToken: token ?? "sync-1" });
};

describe("googleWatchKeeper.pull", () => {
  it("moves the cursor on only once the events are stored", async () => {
    const { keeper, varOf } = world(calendar);
    expect(await keeper.ensure("prj_1", "cal")).toMatchObject({ action: "created" });
    expect(varOf("CalendarEventsSyncToken")).toBe("sync-1");
    const first = await keeper.pull("prj_1", "cal");
    expect(first.events.map((e) => e.event_type)).toEqual(["event_created"]);
    await first.settle(false); // not stored: Google's retry must read the change again
    expect(varOf("CalendarEventsSyncToken")).toBe("sync-1");
    const again = await keeper.pull("prj_1", "cal");
    expect(again.events).toHaveLength(1);
    await again.settle(true);
    expect(varOf("CalendarEventsSyncToken")).toBe("sync-2");
    const last = await keeper.pull("prj_1", "cal");
    expect(last.events).toEqual([]);
    await last.settle(true);
    await keeper.dispose();
  });
});
