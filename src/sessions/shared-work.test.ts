import { describe, expect, it } from "vitest";
import { sessionsFixture } from "../../test/support/sessions.ts";
import { localBus } from "../cluster/bus.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { WorkQueue } from "../cluster/work-queue.ts";
import { StorageUnavailable } from "../storage/unavailable.ts";

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
    abandon: async () => {},
    orphans: async () => [],
    once: async () => true,
    dispose: async () => {},
  };
  return { cluster, pushed, served };
}

/** A webhook's event for the fixture's `on_post` trigger, through the one way in. */
function webhookOf(f: Awaited<ReturnType<typeof sessionsFixture>>) {
  const trigger = f.doc.triggers.find((t) => t.name === "on_post")!;
  return () =>
    f.manager.ingest({
      source: { kind: "webhook", trigger },
      doc: f.doc,
      deployment: { id: "dep_1", buildId: "bld_1" },
      event: { type: "post", data: {} as never },
    });
}

describe("SharedWork (through the facade)", () => {
  it("a stopping instance queues no webhook's session and takes none from the queue", async () => {
    const c = queuedCluster();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    const webhook = webhookOf(f);
    await f.manager.recover();
    f.manager.serve(); // serves the queue from now on
    expect(c.served.free()).toBe(true);
    const { session } = await webhook();
    expect(c.pushed).toEqual([session!.id]);
    f.manager.shutdown();
    expect(c.served.free()).toBe(false);
    await expect(webhook()).rejects.toMatchObject({ code: "unavailable" });
    expect(c.pushed).toHaveLength(1);
    await f.manager.dispose();
  });

  it("the queue's Redis gone: 503 before anything is stored, or accepted once stored and marked", async () => {
    const c = queuedCluster();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    const webhook = webhookOf(f);
    const gone = () => Promise.reject(new Error("Reached the max retries per request limit"));
    const { queue } = c.cluster;
    queue!.size = gone;
    const refused = webhook();
    await expect(refused).rejects.toBeInstanceOf(StorageUnavailable);
    queue!.size = async () => 0;
    queue!.intend = gone;
    await expect(webhook()).rejects.toBeInstanceOf(StorageUnavailable);
    expect(await f.stores.sessions.list({ limit: 10 })).toEqual([]);
    queue!.intend = async () => {};
    queue!.push = gone; // after the record and the mark: a sweep queues it (never-queued.test.ts)
    const { session } = await webhook();
    expect((await f.stores.sessions.get(session!.id))?.state).toBe("created");
    await f.manager.dispose();
  });
});
