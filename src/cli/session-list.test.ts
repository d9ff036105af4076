import { describe, expect, it } from "vitest";
import { listNotice } from "./session.ts";

describe("session list's notice", () => {
  it("says nothing when no row was left out, or when an older service does not say", () => {
    expect(listNotice(3, { more: false, total: 3 })).toBeNull();
    expect(listNotice(100, {})).toBeNull();
  });

  it("gives the total when the service counted it, with thousands separated", () => {
    expect(listNotice(100, { more: true, total: 2345 })).toBe(
      "showing 100 of 2,345; more with --limit N",
    );
  });

  it("says newest without a total (a --state filter is not counted)", () => {
    expect(listNotice(1000, { more: true })).toBe("showing the newest 1,000; more with --limit N");
  });
});
