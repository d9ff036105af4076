import { describe, expect, it } from "vitest";
import { listNotice, timeArg } from "./list-args.ts";

describe("session list's notice", () => {
  it("says nothing when no row was left out, or when an older service does not say", () => {
    expect(listNotice(3, { more: false, total: 3 })).toBeNull();
    expect(listNotice(100, {})).toBeNull();
  });

  it("says how to see the next page when the service gives one", () => {
    expect(listNotice(100, { more: true, next: "ses_01" })).toBe(
      "showing the newest 100; older ones with --before ses_01",
    );
  });

  it("gives the total when an older service counted it, with thousands separated", () => {
    expect(listNotice(100, { more: true, total: 2345 })).toBe(
      "showing 100 of 2,345; more with --limit N",
    );
  });

  it("says newest without a total (a --state filter is not counted)", () => {
    expect(listNotice(1000, { more: true })).toBe("showing the newest 1,000; more with --limit N");
  });
});

describe("session list's --since and --until", () => {
  const now = Date.parse("2026-12-06T04:00:00.000Z");
  it("takes an age before now or an ISO time", () => {
    expect(timeArg("2h", "since", now)).toBe("2026-12-06T02:00:00.000Z");
    expect(timeArg("7d", "since", now)).toBe("2026-11-29T04:00:00.000Z");
    expect(timeArg("2026-12-01T00:00:00Z", "until", now)).toBe("2026-12-01T00:00:00Z");
  });
  it("refuses anything else, naming the flag", () => {
    expect(() => timeArg("yesterday", "since", now)).toThrow(/--since: expected an ISO-8601 time/);
  });
});
