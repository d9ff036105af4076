import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeployResult } from "../src/deploy/index.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { type StandInGoogle, standInGoogle } from "./support/google-api.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { until } from "./support/until.ts";

/**
 * Two instances sharing one PostgreSQL (Redis the bus), both told of a Google Calendar
 * connection's changes and both waking when its channel's renewal is due: the channel is made
 * once and renewed once (the database takes one instance's claim), and one notification
 * delivered to both instances at once makes one event, not two.
 */
const FIXTURE = `${import.meta.dirname}/fixtures/connections-google`;
// Instances sharing a store share the key that seals its secrets.
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the Google watch channels' multi-instance suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const TOKEN = "google-cluster-token";

describe.skipIf(!enabled)("Google watch channels on instances sharing one PostgreSQL", () => {
  let google: StandInGoogle;
  beforeAll(async () => {
    google = await standInGoogle(TOKEN);
    google.lives.push(8000); // the first channel's renewal is due 4 s after it is made
  });
  afterAll(() => google.close());
  // One public URL in front of both, as a fleet behind a router has.
  const publicUrl = "https://hooks.example.com";
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500, publicUrl });
  const b = useEmulator({ storage, redisUrl, leaseMs: 1500, publicUrl });
  const put = (via: typeof a, name: string, value: string, secret = false) =>
    via.api(`/envs/google_push/vars/cal__${name}`, {
      method: "PUT",
      body: JSON.stringify({ value, secret }),
    });
  const vars = async () => {
    const { vars } = await b.api<{ vars: { name: string; value: string }[] }>(
      "/envs/google_push/vars",
    );
    return Object.fromEntries(vars.map((x) => [x.name.replace(/^cal__/, ""), x.value]));
  };
  const watches = () => google.calls.filter((c) => c.path.endsWith("/events/watch")).length;
  let path = "";

  it("makes the channel once and renews it once, though both instances wake for it", async () => {
    const manifest = [
      "version: v1",
      "project:",
      "  name: google_push",
      "  connections:",
      "    - {name: cal, integration: googlecalendar}",
      "  triggers:",
      "    - {name: on_event, connection: cal, call: program.py:on_event, is_durable: false}",
    ].join("\n");
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const result = await a.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    path = result.connections[0]!.inbound_path;
    await put(a, "base_url", google.url);
    await put(a, "oauth_AccessToken", TOKEN, true);
    const first = await until("the channel's id", async () => (await vars()).CalendarEventsWatchID);
    await new Promise((r) => setTimeout(r, 1000)); // time for a second channel, if any
    expect(watches()).toBe(1);
    expect(google.channels[0]!.address).toBe(`${publicUrl}${path}`);
    await until("the renewal", async () => (await vars()).CalendarEventsWatchID !== first, 20_000);
    await new Promise((r) => setTimeout(r, 1500)); // time for a second renewal, if any
    expect(watches()).toBe(2);
    expect(google.channels[0]!.stopped).toBe(true);
  });

  it("makes one event of one change, though both instances are notified at once", async () => {
    google.calendarChanges.push({ id: "ev1", status: "confirmed", sequence: 0, summary: "One" });
    const [ra, rb] = await Promise.all([
      google.notify("calendar", "exists", undefined, a.url + path),
      google.notify("calendar", "exists", undefined, b.url + path),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([200, 202]);
    const { events } = await a.api<{ events: { event_type: string }[] }>(
      "/events?project=google_push&limit=10",
    );
    expect(events.map((e) => e.event_type)).toEqual(["event_created"]);
    // Each cursor was read once: the second reader waited for the first's, then read on from it.
    const reads = google.calls.filter((c) => c.path.includes("syncToken="));
    expect(reads.map((c) => /syncToken=([^&]+)/.exec(c.path)![1])).toEqual(["sync-1", "sync-2"]);
    expect((await vars()).CalendarEventsSyncToken).toBe("sync-3");
  });
});
