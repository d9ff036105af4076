// Session processes run at a lower CPU priority than the service, so the front door answers first
// (docs/limits.md, "CPU priority"): nice 5 by default, the session host's thread 5 below the front
// door's; SVC_SESSION_PRIORITY=idle (the container image's setting) puts them and their threads at
// SCHED_IDLE; normal leaves them, and the host, at the service's own.
// Real service, real Python: the handler reports what the kernel says of its process.
import { getPriority } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSettings, type SessionPriority } from "../src/config.ts";
import { useEmulator } from "./support/emulator.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "priority");
// This file tests the default itself: a slowed run's SVC_SESSION_PRIORITY (which the tests'
// services take from the environment, test/support/quiet-emulator.ts) must not set it.
delete process.env.SVC_SESSION_PRIORITY;
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

describe("SVC_SESSION_PRIORITY", () => {
  it("is low unless set, and refuses what it does not know", () => {
    expect(resolveSettings({}, {}).sessionPriority).toBe("low");
    for (const p of ["idle", "low", "normal"]) {
      expect(resolveSettings({}, { SVC_SESSION_PRIORITY: p }).sessionPriority).toBe(p);
    }
    expect(() => resolveSettings({}, { SVC_SESSION_PRIORITY: "high" })).toThrow(
      'SVC_SESSION_PRIORITY: expected idle, low or normal, got "high"',
    );
  });

  // The services run in this process, and their session host is this thread: one that lowers it
  // (the front door's precedence, docs/limits.md) cannot raise it back. So `normal`, which leaves
  // it, comes first; `host` is this thread's nice once each has started.
  const ours = getPriority();
  const linux = process.platform === "linux";
  const cases: [SessionPriority | undefined, { policy: number; nice: number; host: number }][] = [
    ["normal", { policy: SCHED_OTHER, nice: ours, host: ours }],
    [undefined, { policy: SCHED_OTHER, nice: Math.max(ours, 5), host: linux ? ours + 5 : ours }],
    ["idle", { policy: SCHED_IDLE, nice: 19, host: linux ? ours + 5 : ours }],
  ];
  for (const [priority, want] of cases) {
    describe(`${priority ?? "unset"}`, () => {
      const emu = useEmulator(priority ? { sessionPriority: priority } : {});
      it(`runs every thread of a session at policy ${want.policy}, nice ${want.nice}, the host at nice ${want.host}`, async () => {
        expect(getPriority(0)).toBe(Math.min(19, want.host));
        const urls = await emu.deploy(FIXTURE);
        const res = await fetch(urls.where!, { method: "POST", body: "{}" });
        expect(res.status).toBe(200);
        // Every thread of the session's process: the handler's, the runner's, the activity's.
        expect(await res.json()).toEqual({ policies: [want.policy], nice: want.nice, many: true });
      });
    });
  }
});
