import { describe, expect, it } from "vitest";
import { type Clock, isoNow } from "./clock.ts";

describe("isoNow", () => {
  it("is the clock's now as an ISO timestamp, made again as the clock moves", () => {
    let t = Date.parse("2026-12-07T06:00:00.000Z");
    const clock: Clock = { now: () => t, setTimeout: () => 0, clearTimeout: () => {} };
    expect(isoNow(clock)).toBe("2026-12-07T06:00:00.000Z");
    expect(isoNow(clock)).toBe("2026-12-07T06:00:00.000Z");
    t += 1;
    expect(isoNow(clock)).toBe("2026-12-07T06:00:00.001Z");
    t -= 1001;
    expect(isoNow(clock)).toBe("2026-12-07T05:59:59.000Z");
  });
});
