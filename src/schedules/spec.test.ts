import { describe, expect, it } from "vitest";
import { parseEvery, parseSchedule } from "./spec.ts";

const at = (iso: string) => new Date(iso);
const iso = (d: Date | null) => d?.toISOString() ?? null;

describe("parseSchedule", () => {
  it("reads five-field cron in UTC by default", () => {
    const s = parseSchedule("*/15 * * * *");
    expect(iso(s.next(at("2026-03-01T10:07:00Z")))).toBe("2026-03-01T10:15:00.000Z");
    expect(iso(s.next(at("2026-03-01T10:15:00Z")))).toBe("2026-03-01T10:30:00.000Z");
  });

  it("reads every descriptor AutoKitteh accepts", () => {
    const after = at("2026-03-04T10:07:00Z"); // a Wednesday
    const next = (text: string) => iso(parseSchedule(text).next(after));
    expect(next("@hourly")).toBe("2026-03-04T11:00:00.000Z");
    expect(next("@daily")).toBe("2026-03-05T00:00:00.000Z");
    expect(next("@midnight")).toBe("2026-03-05T00:00:00.000Z");
    expect(next("@weekly")).toBe("2026-03-08T00:00:00.000Z");
    expect(next("@monthly")).toBe("2026-04-01T00:00:00.000Z");
    expect(next("@yearly")).toBe("2027-01-01T00:00:00.000Z");
    expect(next("@annually")).toBe("2027-01-01T00:00:00.000Z");
  });

  it("reads @every with Go durations, on slots counted from the epoch", () => {
    expect(parseEvery("1h30m")).toBe(5_400_000);
    expect(parseEvery("15m")).toBe(900_000);
    expect(parseEvery("10s")).toBe(10_000);
    expect(parseEvery("1.5h")).toBeNull();
    const s = parseSchedule("@every 1h30m");
    expect(iso(s.next(at("2026-03-01T00:07:00Z")))).toBe("2026-03-01T01:30:00.000Z");
    expect(iso(parseSchedule("@every 2s").next(at("2026-03-01T00:00:01.500Z")))).toBe(
      "2026-03-01T00:00:02.000Z",
    );
  });

  it("follows the trigger's timezone, daylight saving included", () => {
    const s = parseSchedule("0 9 * * *", "Europe/Paris");
    expect(iso(s.next(at("2026-01-10T00:00:00Z")))).toBe("2026-01-10T08:00:00.000Z");
    expect(iso(s.next(at("2026-07-10T00:00:00Z")))).toBe("2026-07-10T07:00:00.000Z");
  });

  it("finds the latest slot in a window, or none", () => {
    const s = parseSchedule("0 9 * * 1-5"); // weekdays 09:00 UTC
    // Sunday noon: the latest was Friday's.
    const sunday = at("2026-03-08T12:00:00Z");
    expect(iso(s.latest(at("2026-01-01T00:00:00Z"), sunday))).toBe("2026-03-06T09:00:00.000Z");
    expect(s.latest(at("2026-03-06T09:00:00Z"), sunday)).toBeNull();
    const every = parseSchedule("@every 15m");
    expect(iso(every.latest(at("2026-03-01T00:00:00Z"), at("2026-03-01T10:07:00Z")))).toBe(
      "2026-03-01T10:00:00.000Z",
    );
    expect(every.latest(at("2026-03-01T10:00:00Z"), at("2026-03-01T10:07:00Z"))).toBeNull();
  });

  it("refuses what it cannot read, saying why", () => {
    const problem = (text: string, tz?: string) => {
      try {
        parseSchedule(text, tz);
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(problem("* * * * * *")).toMatch(/give five cron fields/);
    expect(problem("61 * * * *")).toMatch(/not a valid cron expression/);
    expect(problem("@fortnightly")).toMatch(/not a known descriptor/);
    expect(problem("@every")).toMatch(/@every takes a duration/);
    expect(problem("@every 0s")).toMatch(/at least 1s/);
    expect(problem("@daily", "Mars/Olympus")).toMatch(/unknown timezone "Mars\/Olympus"/);
  });
});
