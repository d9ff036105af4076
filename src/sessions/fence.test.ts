// A session another instance took over while this one stalled (its write fenced, or it was
// declared dead) is fenced here: it stops
// (or never starts) and nothing more of it is written, so the adopter's run is the only one on
// record. The session core with a fake runtime and a cluster stand-in that reports lost leases.
import { describe, expect, it } from "vitest";
import { sessionsFixture } from "../../test/support/sessions.ts";
import { localBus } from "../cluster/bus.ts";
import type { Cluster } from "../cluster/cluster.ts";

/** A shared cluster of one instance whose sessions can be lost on demand (`lose`). */
function losingCluster() {
  const listeners = new Set<(id: string) => void>();
  const cluster: Cluster = {
    shared: true,
    instanceId: "stalled",
    bus: localBus(),
    onLost(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    once: async () => true,
    dispose: async () => {},
  };
  const lose = (id: string) => {
    for (const listener of listeners) listener(id);
  };
  return { cluster, lose };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("a session taken over while this instance stalled", () => {
  it("running: its process is stopped, and the adopter's record is never overwritten", async () => {
    const { cluster, lose } = losingCluster();
    const f = await sessionsFixture({ on_wait: () => new Promise<void>(() => {}) }, { cluster });
    const session = await f.start("on_wait");
    while ((await f.stores.sessions.get(session.id))?.state !== "running") await tick();
    // From here the adopter's run is the one on record.
    const adopted = { ...(await f.stores.sessions.get(session.id))!, state: "completed" as const };
    await f.stores.sessions.put(adopted);
    const logBefore = await f.stores.logs.get(session.id);
    let told = "";
    f.manager.onEnd(session.id, (record) => (told = record.state));
    lose(session.id);
    // Gone from here only once its process has ended (the fake's stop()).
    while (f.manager.live(session.id)) await tick();
    for (let i = 0; i < 20; i++) await tick();
    await f.clock.advance(1000); // any timed log flush would be due by now
    expect(await f.stores.sessions.get(session.id)).toEqual(adopted);
    expect(await f.stores.logs.get(session.id)).toEqual(logBefore);
    // It left this instance without an end of its own (not "stopped": it was not stopped).
    expect(told).toBe("running");
    await f.manager.dispose();
  });

  it("not started yet: it never starts here", async () => {
    const { cluster, lose } = losingCluster();
    const ran: string[] = [];
    const f = await sessionsFixture({ on_post: (s) => void ran.push(s.sessionId) }, { cluster });
    const session = await f.start("on_post");
    lose(session.id); // before its first turn here
    while (f.manager.live(session.id)) await tick();
    for (let i = 0; i < 20; i++) await tick();
    expect(ran).toEqual([]);
    expect(f.fake.started).toEqual([]);
    expect(await f.stores.sessions.get(session.id)).toMatchObject({ state: "created" });
    await f.manager.dispose();
  });
});
