import { describe, expect, it } from "vitest";
import { calendarEvents, driveEvents, snakeName } from "./google-events.ts";
import { verifyGooglePush, watchExpiry } from "./google-push.ts";
import { renewDue } from "./google-watch.ts";

const req = (headers: Record<string, string>) => ({
  method: "POST",
  headers: new Headers(headers),
  body: new Uint8Array(),
  now: Date.now(),
});
const vars = (v: Record<string, string>) => (n: string) => v[n];
const calendar = verifyGooglePush("googlecalendar");
const withToken = vars({ CalendarEventsWatchToken: "tok-1" });

describe("verifyGooglePush", () => {
  it("answers sync, pulls on any other state, with the channel's token", () => {
    const sync = calendar(
      req({ "x-goog-channel-token": "tok-1", "x-goog-resource-state": "sync" }),
      withToken,
    );
    expect(sync).toMatchObject({ kind: "answer", status: 200 });
    const exists = calendar(
      req({ "x-goog-channel-token": "tok-1", "x-goog-resource-state": "exists" }),
      withToken,
    );
    expect(exists).toEqual({ kind: "pull", state: "exists" });
  });

  it("refuses a wrong or missing token, a missing state, and a connection without a channel", () => {
    const cases: [Record<string, string>, ReturnType<typeof vars>, number][] = [
      [{ "x-goog-channel-token": "tok-2", "x-goog-resource-state": "exists" }, withToken, 401],
      [{ "x-goog-resource-state": "exists" }, withToken, 401],
      [{ "x-goog-channel-token": "tok-1" }, withToken, 400],
      [{ "x-goog-channel-token": "tok-1", "x-goog-resource-state": "sync" }, vars({}), 403],
    ];
    for (const [headers, v, status] of cases) {
      expect(calendar(req(headers), v)).toMatchObject({ kind: "refuse", status });
    }
    // Drive checks its own token var, not Calendar's.
    const drive = verifyGooglePush("googledrive");
    const h = { "x-goog-channel-token": "tok-1", "x-goog-resource-state": "change" };
    expect(drive(req(h), withToken)).toMatchObject({ kind: "refuse", status: 403 });
  });
});

describe("Google events", () => {
  it("names fields as AutoKitteh's Go structs do", () => {
    expect(["htmlLink", "iCalUID", "dateTime", "recurringEventId", "id"].map(snakeName)).toEqual([
      "html_link",
      "i_cal_uid",
      "date_time",
      "recurring_event_id",
      "id",
    ]);
  });

  it("types calendar events by status and sequence, keeping user map keys", () => {
    const events = calendarEvents([
      { id: "a", status: "confirmed", sequence: 0, extendedProperties: { shared: { myKey: 1 } } },
      { id: "b", status: "confirmed", sequence: 2 },
      { id: "c", status: "cancelled", sequence: 3 },
    ]);
    expect(events.map((e) => e.event_type)).toEqual([
      "event_created",
      "event_updated",
      "event_deleted",
    ]);
    expect(events[0]!.data).toMatchObject({
      extended_properties: { shared: { myKey: 1 } },
      summary: "",
    });
  });

  it("types drive changes by removed", () => {
    const events = driveEvents([{ fileId: "f", file: { mimeType: "x" } }, { removed: true }]);
    expect(events.map((e) => e.event_type)).toEqual(["file_change", "file_remove"]);
    expect(events[0]!.data).toMatchObject({
      file_id: "f",
      file: { mime_type: "x" },
      removed: false,
    });
  });
});

describe("watch channel times", () => {
  it("reads Calendar's ms and Drive's seconds", () => {
    expect(watchExpiry("googlecalendar", "1700000000000")).toBe(1_700_000_000_000);
    expect(watchExpiry("googledrive", "1700000000")).toBe(1_700_000_000_000);
    expect(watchExpiry("googledrive", "")).toBeNull();
  });

  it("renews 3 days before expiry, or halfway through a shorter life", () => {
    const day = 24 * 3600_000;
    expect(renewDue(10 * day, 3 * day)).toBe(7 * day);
    expect(renewDue(10_000, 0)).toBe(5000);
  });
});
