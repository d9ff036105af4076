import { describe, expect, it } from "vitest";
import { resolveSettings } from "./config.ts";

describe("the settings of reused processes (SVC_REUSE_*)", () => {
  it("default to 1,000 sessions a process, 60 s idle, and SVC_MAX_SESSIONS idle", () => {
    const d = resolveSettings({}, {});
    expect([d.reuseSessions, d.reuseIdleMs, d.reusePool]).toEqual([1000, 60_000, 32]);
    expect(resolveSettings({}, { SVC_MAX_SESSIONS: "8" }).reusePool).toBe(8);
  });

  it("read SVC_REUSE_SESSIONS, SVC_REUSE_IDLE in seconds and SVC_REUSE_POOL", () => {
    const s = resolveSettings(
      {},
      {
        SVC_REUSE_SESSIONS: "2",
        SVC_REUSE_IDLE: "0.5",
        SVC_REUSE_POOL: "0",
        SVC_MAX_SESSIONS: "8",
      },
    );
    expect([s.reuseSessions, s.reuseIdleMs, s.reusePool]).toEqual([2, 500, 0]);
    // Flags win over variables, as for every setting.
    expect(resolveSettings({ reuseSessions: 5 }, { SVC_REUSE_SESSIONS: "2" }).reuseSessions).toBe(
      5,
    );
  });

  it("refuse a bad value in one line naming the variable", () => {
    const refused = (env: Record<string, string>) => {
      try {
        resolveSettings({}, env);
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(refused({ SVC_REUSE_SESSIONS: "0" })).toBe(
      'SVC_REUSE_SESSIONS: expected a whole number of at least 1, got "0"',
    );
    expect(refused({ SVC_REUSE_SESSIONS: "1.5" })).toMatch(/^SVC_REUSE_SESSIONS: /);
    expect(refused({ SVC_REUSE_IDLE: "soon" })).toBe(
      'SVC_REUSE_IDLE: expected seconds of at most 2147483, got "soon"',
    );
    expect(refused({ SVC_REUSE_IDLE: "0" })).toMatch(/^SVC_REUSE_IDLE: /);
    // Past what a Node timer can wait, the process would end at once: refused instead.
    expect(refused({ SVC_REUSE_IDLE: "3000000" })).toMatch(/^SVC_REUSE_IDLE: /);
    expect(refused({ SVC_REUSE_POOL: "-1" })).toBe(
      'SVC_REUSE_POOL: expected a whole number, got "-1"',
    );
  });
});
