import { describe, expect, it } from "vitest";
import { sessionsFixture } from "../../test/support/sessions.ts";
import { localBus } from "../cluster/bus.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { WorkQueue } from "../cluster/work-queue.ts";

/** A shared cluster with a queue in process: what is pushed is noted, `free` is what serve got. */
function queuedCluster() {
  const pushed: string[] = [];
  const served = { free: () => false };
  const queue: WorkQueue = {
    intend: async () => {},
    push: async (item) => void pushed.push(item.session_id),
    lapsed: async () => [],
    size: async () => pushed.length,
    serve: (free) => {
      served.free = free;
    },
    poke: () => {},
    dispose: async () => {},
  };
  const cluster: Cluster = {
    shared: true,
    instanceId: "me",
    bus: localBus(),
    queue,
    claim: async () => true,
    release: async () => {},
    orphans: async () => [],
    once: async () => true,
    dispose: async () => {},
  };
  return { cluster, pushed, served };
}

describe("SharedWork (through the facade)", () => {
  it("a stopping instance queues no webhook's session and takes none from the queue", async () => {
    const c = queuedCluster();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    const trigger = f.doc.triggers.find((t) => t.name === "on_post")!;
    const webhook = () =>
      f.manager.ingest({
        source: { kind: "webhook", trigger },
        doc: f.doc,
        deployment: { id: "dep_1", buildId: "bld_1" },
        event: { type: "post", data: {} as never },
      });
    await f.manager.recover(); // serves the queue from now on
    expect(c.served.free()).toBe(true);
    const { session } = await webhook();
    expect(c.pushed).toEqual([session!.id]);
    f.manager.shutdown();
    expect(c.served.free()).toBe(false);
    await expect(webhook()).rejects.toMatchObject({ code: "unavailable" });
    expect(c.pushed).toHaveLength(1);
    await f.manager.dispose();
  });
});
