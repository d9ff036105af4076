import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import { fakeIo } from "./support/cli.ts";
import { connectionProject } from "./support/connection-project.ts";
import { useEmulator } from "./support/emulator.ts";
import { type StandInGoogle, standInGoogle } from "./support/google-api.ts";
import { until } from "./support/until.ts";

/**
 * Google Calendar and Drive connections holding an OAuth token (as an authorization leaves
 * it), through the real service and real Python: the service makes a watch channel at a
 * stand-in Google API on loopback (events.watch on the primary calendar; changes.watch from a
 * start page token) to the connection's inbound URL with a random channel token; a
 * notification carrying that token makes the service read what changed with the connection's
 * token and start the triggers' sessions with AutoKitteh's event types; a wrong token is
 * refused with nothing stored; a short-lived channel is renewed (the old one stopped); the
 * channels are stopped when the connections leave the manifest.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-google");
const TOKEN = "google-e2e-access-token";

describe("connections: Google Calendar and Drive push notifications", () => {
  let google: StandInGoogle;
  beforeAll(async () => {
    google = await standInGoogle(TOKEN);
    // The first calendar channel lives 10 s: its renewal is due halfway, after the tests before
    // the renewal's have made their last change to the project (each change looks at the
    // channels too), so only the keeper's timer renews it.
    google.lives.push(10_000);
  });
  afterAll(() => google.close());
  const emu = useEmulator();
  const project = connectionProject(emu, "google_push", FIXTURE);
  const { deploy, counts } = project;
  const inbound: Record<string, string> = {};
  const cli = async (...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
    return { code: await runCli(argv, io), out, err };
  };
  const setVar = (conn: string, ...args: string[]) =>
    cli("var", "set", "--connection", `google_push/${conn}`, ...args);
  const vars = (conn: string) => project.vars(conn);
  const sessionPrints = async (res: Response) => {
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    const prints: string[] = [];
    for (const id of session_ids) {
      expect((await emu.ended(id)).state).toBe("completed");
      prints.push(...(await emu.prints(id)));
    }
    return prints.sort();
  };

  it("makes a channel for each connection once it holds an OAuth token", async () => {
    const result = await deploy();
    for (const c of result.connections) inbound[c.name] = emu.url + c.inbound_path;
    expect(google.calls).toEqual([]); // no token yet: nothing to watch with
    // base_url as googleapiclient's api_endpoint takes it, the API's path included: the
    // service's own calls go to the root before it (the other Google tests set the root).
    const apiPath = { cal: "/calendar/v3/", drv: "/drive/v3/" };
    for (const conn of ["cal", "drv"] as const) {
      expect((await setVar(conn, "base_url", google.url + apiPath[conn])).code).toBe(0);
      expect((await setVar(conn, "--secret", "oauth_AccessToken", TOKEN)).code).toBe(0);
    }
    const cal = await until("the calendar channel's vars", async () => {
      const v = await vars("cal");
      return v.CalendarEventsWatchID && v.CalendarEventsSyncToken ? v : undefined;
    });
    const drv = await until("the drive channel's vars", async () => {
      const v = await vars("drv");
      return v.DriveEventsWatchID ? v : undefined;
    });
    const [calChannel, driveChannel] = ["calendar", "drive"].map(
      (k) => google.channels.find((c) => c.kind === k)!,
    );
    expect(calChannel).toMatchObject({ address: inbound.cal, id: cal.CalendarEventsWatchID });
    expect(driveChannel).toMatchObject({ address: inbound.drv, id: drv.DriveEventsWatchID });
    expect(calChannel!.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(driveChannel!.token).not.toBe(calChannel!.token);
    expect(cal).toMatchObject({
      CalendarEventsWatchResID: "res-calendar-1",
      CalendarEventsSyncToken: "sync-1",
      CalendarEventsWatchToken: "********",
      CalendarEventsWatchExp: String(calChannel!.expiration),
    });
    expect(drv).toMatchObject({
      DriveEventsWatchResID: driveChannel!.resourceId,
      DriveChangesStartPageToken: "page-1",
      DriveEventsWatchToken: "********",
      DriveEventsWatchExp: String(Math.floor(driveChannel!.expiration / 1000)),
    });
    const watch = google.calls.find((c) => c.path.startsWith("/drive/v3/changes/watch"))!;
    expect(watch.path).toContain("pageToken=page-1");
    expect(google.calls.every((c) => c.authorized)).toBe(true);
    const line = (await deploy()).lines.find((l) => l.includes('connection "cal": inbound path'));
    expect(line).toMatch(/\(ready\)$/);
  });

  it("acknowledges the channels' sync messages without an event", async () => {
    await new Promise((r) => setTimeout(r, 200)); // the stand-in posts them 20 ms after a watch
    expect(await counts()).toEqual([0, 0]);
    const res = await google.notify("calendar", "sync");
    expect(res.status).toBe(200);
    expect(await counts()).toEqual([0, 0]);
    // Nor are Google's changes read for them: the cursors are where the watches left them.
    const reads = google.calls.filter(
      (c) => c.path.includes("syncToken=") || c.path.startsWith("/drive/v3/changes?"),
    );
    expect(reads).toEqual([]);
  });

  it("reads the calendar's changes with the sync token and starts the trigger's session", async () => {
    google.calendarChanges.push({
      kind: "calendar#event",
      id: "ev1",
      status: "confirmed",
      sequence: 0,
      summary: "Standup",
      htmlLink: "https://calendar.google.com/event?eid=ev1",
      start: { dateTime: "2026-12-07T09:00:00Z" },
      end: { dateTime: "2026-12-07T09:15:00Z" },
      extendedProperties: { private: { myKey: "kept" } },
    });
    google.calendarChanges.push({ kind: "calendar#event", id: "ev0", status: "cancelled" });
    const prints = await sessionPrints(await google.notify("calendar", "exists"));
    expect(prints).toEqual([
      "event_created ev1 'Standup' 2026-12-07T09:00:00Z ''",
      "event_deleted ev0 '' None ''",
    ]);
    expect(google.calls.some((c) => c.path.includes("syncToken=sync-1"))).toBe(true);
    expect((await vars("cal")).CalendarEventsSyncToken).toBe("sync-2");
    const events = await emu.api<{ events: { data: Record<string, unknown> }[] }>(
      "/events?project=google_push&limit=10",
    );
    const created = events.events.find((e) => e.data.id === "ev1")!.data;
    expect(created).toMatchObject({
      html_link: "https://calendar.google.com/event?eid=ev1",
      extended_properties: { private: { myKey: "kept" } },
    });
  });

  it("reads Drive's changes from the page token: file_change and file_remove", async () => {
    google.driveChanges.push(
      {
        kind: "drive#change",
        changeType: "file",
        fileId: "f1",
        removed: false,
        time: "2026-12-06T08:00:00Z",
        file: { kind: "drive#file", id: "f1", name: "notes.txt", mimeType: "text/plain" },
      },
      { kind: "drive#change", changeType: "file", fileId: "f2", removed: true },
    );
    const prints = await sessionPrints(await google.notify("drive", "change"));
    expect(prints).toEqual([
      "file_change f1 notes.txt removed=False",
      "file_remove f2 None removed=True",
    ]);
    expect((await vars("drv")).DriveChangesStartPageToken).toBe("page-2");
  });

  it("answers a notification with nothing new 200, storing nothing", async () => {
    const before = await counts();
    const res = await google.notify("drive", "change");
    expect(res.status).toBe(200);
    expect(await counts()).toEqual(before);
  });

  it("refuses a wrong or missing channel token: problem+json, nothing read or stored", async () => {
    google.calendarChanges.push({ id: "ev9", status: "confirmed", sequence: 0 });
    for (const [token, detail] of [
      ["not-the-channel-token", "not this connection's channel token"],
      ["", "X-Goog-Channel-Token is missing"],
    ] as const) {
      const before = await counts();
      const calls = google.calls.length;
      const res = await google.notify("calendar", "exists", token);
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain(detail);
      expect(await counts()).toEqual(before);
      expect(google.calls.slice(calls).filter((c) => c.method === "GET")).toEqual([]);
    }
    google.calendarChanges.length = 0;
  });

  it("renews a channel before it expires and stops the one it replaced", async () => {
    const first = google.channels.find((c) => c.kind === "calendar")!;
    const renewed = await until(
      "the calendar channel renewed",
      async () => {
        const v = await vars("cal");
        return v.CalendarEventsWatchID !== first.id && v;
      },
      20_000,
    );
    const second = google.channels.filter((c) => c.kind === "calendar").at(-1)!;
    expect(second.id).toBe(renewed.CalendarEventsWatchID);
    expect(second.created).toBeLessThan(first.expiration); // made before the old one expired
    expect(second.token).toBe(first.token); // the channel token is kept across renewals
    expect(renewed.CalendarEventsSyncToken).toBe("sync-2"); // and so is the cursor
    await until("the old channel stopped", () => first.stopped);
    expect(google.calls).toContainEqual({
      method: "POST",
      path: "/calendar/v3/channels/stop",
      body: { id: first.id, resourceId: first.resourceId },
      authorized: true,
    });
    expect(Number(renewed.CalendarEventsWatchExp)).toBeGreaterThan(Date.now() + 3000_000);
    const creates = google.channels.filter((c) => c.kind === "calendar").length;
    await new Promise((r) => setTimeout(r, 1500)); // no second renewal: the new one lives an hour
    expect(google.channels.filter((c) => c.kind === "calendar")).toHaveLength(creates);
  });

  it("makes a channel on the calendar a changed CalendarID names, from its own sync, and stops the old", async () => {
    const old = google.channels.filter((c) => c.kind === "calendar").at(-1)!;
    expect(old.calendar).toBe("primary");
    expect((await vars("cal")).CalendarEventsWatchCalendarID).toBe("primary");
    expect((await setVar("cal", "CalendarID", "team@example.com")).code).toBe(0);
    const moved = await until("a channel on the team calendar", async () => {
      const v = await vars("cal");
      return v.CalendarEventsWatchCalendarID === "team@example.com" && v;
    });
    const made = google.channels.filter((c) => c.kind === "calendar").at(-1)!;
    expect(made).toMatchObject({ calendar: "team@example.com", id: moved.CalendarEventsWatchID });
    expect(made.token).toBe(old.token);
    // The cursor is that calendar's, from a full sync of it: primary's would be refused (410).
    expect(moved.CalendarEventsSyncToken).toBe("team@example.com-sync-1");
    await until("the primary calendar's channel stopped", () => old.stopped);
    google.calendarChanges.push({ kind: "calendar#event", id: "ev9", status: "confirmed" });
    const prints = await sessionPrints(await google.notify("calendar", "exists"));
    expect(prints).toEqual(["event_created ev9 '' None ''"]);
    const read = google.calls.filter((c) => c.path.includes("syncToken=team%40example.com-sync-1"));
    expect(read.map((c) => c.path.split("?")[0])).toEqual([
      "/calendar/v3/calendars/team%40example.com/events",
    ]);
  });

  it("stops the channels once the connections leave the manifest, their vars cleared", async () => {
    const manifest = [
      "version: v1",
      "project:",
      "  name: google_push",
      "  triggers:",
      "    - {name: hook, type: webhook, call: program.py:on_event}",
    ].join("\n");
    await deploy(manifest);
    await until("both channels stopped", () =>
      google.channels.every((c) => c.stopped || c.expiration < Date.now()),
    );
    const left = await until("the channels' vars cleared", async () => {
      const [cal, drv] = [await vars("cal"), await vars("drv")];
      return !cal.CalendarEventsWatchID && !drv.DriveEventsWatchID && { cal, drv };
    });
    expect(left.cal.CalendarEventsWatchToken).toBeUndefined();
    expect(left.cal.CalendarEventsWatchCalendarID).toBeUndefined();
    expect(left.drv.DriveChangesStartPageToken).toBeUndefined();
    const stops = google.calls.filter((c) => c.path.endsWith("/channels/stop"));
    expect(stops.map((c) => c.path).sort()).toEqual([
      "/calendar/v3/channels/stop",
      "/calendar/v3/channels/stop",
      "/calendar/v3/channels/stop",
      "/drive/v3/channels/stop",
    ]);
  });
});
