import { describe, expect, it } from "vitest";
import { fakeFleet } from "../../test/support/owners.ts";
import { sessionsFixture } from "../../test/support/sessions.ts";
import { StorageUnavailable } from "../storage/unavailable.ts";

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
    const c = fakeFleet();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    const webhook = webhookOf(f);
    await f.manager.recover();
    f.manager.serve(); // serves the queue from now on
    expect(c.served.free()).toBe(true);
    const { session } = await webhook();
    expect(c.steps).toEqual([`enqueue ${session!.id}`]);
    f.manager.shutdown();
    expect(c.served.free()).toBe(false);
    await expect(webhook()).rejects.toMatchObject({ code: "unavailable" });
    expect(c.steps).toHaveLength(1);
    await f.manager.dispose();
  });

  it("the queue's database gone: 503, and nothing stored", async () => {
    const c = fakeFleet();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    const webhook = webhookOf(f);
    const gone = () => Promise.reject(new Error("Connection terminated unexpectedly"));
    c.owners.queued = gone;
    await expect(webhook()).rejects.toBeInstanceOf(StorageUnavailable);
    c.owners.queued = async () => 0;
    // The record and its queued owner row are one statement: refused, nothing of it is stored.
    const commit = f.stores.sessions.commit.bind(f.stores.sessions);
    f.stores.sessions.commit = gone;
    await expect(webhook()).rejects.toBeInstanceOf(StorageUnavailable);
    expect(await f.stores.sessions.list({ limit: 10 })).toEqual([]);
    f.stores.sessions.commit = commit;
    const { session } = await webhook();
    expect((await f.stores.sessions.get(session!.id))?.state).toBe("created");
    await f.manager.dispose();
  });

  it("runs a taken session from what the take read, and writes `running` first, not `created` again", async () => {
    const c = fakeFleet();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    await f.manager.recover();
    const { session } = await webhookOf(f)();
    const id = session!.id;
    const record = (await f.stores.sessions.get(id))!;
    const event = await f.stores.events.get(record.event_id);
    // From here on, what storage is asked of the session and what is written of its record.
    const asked: string[] = [];
    for (const key of ["sessions", "events", "logs"] as const) {
      const store = f.stores[key] as { get: (k: string) => Promise<unknown> };
      const get = store.get.bind(store);
      store.get = (k) => {
        asked.push(`${key} ${k}`);
        return get(k);
      };
    }
    const states: string[] = [];
    const commit = f.stores.sessions.commit.bind(f.stores.sessions);
    f.stores.sessions.commit = (sid, change) => {
      if (sid === id && change.record) states.push(`${change.was} → ${change.record.state}`);
      return commit(sid, change);
    };
    const ended = new Promise((r) => f.manager.onEnd(id, r));
    f.manager.serve();
    // The take (PostgreSQL's, one statement) read the record, the event and the log.
    c.queue.splice(0);
    c.held.set(id, 2);
    const stored = { record: JSON.stringify(record), event: JSON.stringify(event), log: null };
    c.served.run({ id, epoch: 2, stored });
    expect(await ended).toMatchObject({ state: "completed" });
    expect(asked).toEqual([]);
    await f.manager.whenEnded(id); // its end is written
    expect(states).toEqual(["created → running", "running → completed"]);
    await f.manager.dispose();
  });
});
