import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { eventRecord, sessionRecord } from "../../test/support/records.ts";
import type { SessionLogEntry } from "../model/records.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { parseStored } from "../storage/drivers/batch.ts";
import { postgresTarget } from "../storage/drivers/postgres.ts";
import { ownerTables } from "../storage/drivers/postgres-owners.ts";
import { createStores } from "../storage/records.ts";
import { PgCoordinator } from "./pg-coordinator.ts";

// The take and its wakers on a real PostgreSQL, with no timing: what a taker reads comes with
// the take, and a queued session's NOTIFY names the one instance that is to take it.

describe.skipIf(!warnIfNoPostgres("the PostgreSQL take tests"))("PgCoordinator's take", () => {
  const open: { dispose(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.dispose();
  });
  afterAll(dropPostgresTestTables);

  /** A store, two joined instances, and a connection LISTENing on the queue's channel. */
  async function fleet() {
    const url = postgresTestUrl();
    const target = postgresTarget(url)!;
    const storage = createStorageFromUrl(url);
    const stores = createStores(storage);
    await storage.setItem("meta:probe", 1); // makes the tables
    open.push({ dispose: () => storage.dispose() });
    const heard: string[] = [];
    const waiters: (() => void)[] = [];
    const listener = new pg.Client({ connectionString: target.url });
    await listener.connect();
    open.push({ dispose: () => listener.end() });
    listener.on("notification", (m) => {
      heard.push(m.payload ?? "");
      for (const w of waiters.splice(0)) w();
    });
    await listener.query(`LISTEN ${ownerTables(target.table).channel}`);
    /** Resolves once a NOTIFY with `payload` was heard. */
    const hear = async (payload: string) => {
      while (!heard.includes(payload)) await new Promise<void>((r) => waiters.push(r));
    };
    const [a, b] = [0, 1].map(() => new PgCoordinator({ ...target, bus: true, leaseMs: 60_000 }));
    for (const c of [a!, b!]) {
      await c.start();
      open.push(c);
    }
    return { stores, a: a!, b: b!, heard, hear };
  }

  it("reads the record, its event and its log in the take's own statement", async () => {
    const { stores, a } = await fleet();
    const log: SessionLogEntry[] = [
      { t: "2026-12-06T08:00:00.000Z", kind: "print", text: "hi", stream: "stdout" },
    ];
    const made = [1, 2].map((i) => {
      const event = eventRecord({ id: `evt_t${i}` });
      const record = sessionRecord({ id: `ses_t${i}`, event_id: event.id, state: "created" });
      return { record, event };
    });
    for (const { record, event } of made) {
      const own = a.enqueue(record.id);
      await stores.sessions.commit(record.id, { record, was: null, event, log, own });
    }
    const first = await a.take();
    expect(first?.id).toBe("ses_t1");
    expect(parseStored(first!.stored.record)).toEqual(made[0]!.record);
    expect(parseStored(first!.stored.event)).toEqual(made[0]!.event);
    expect(parseStored(first!.stored.log)).toEqual(log);
    expect(first?.more).toBe(true);
    const second = await a.take();
    expect(parseStored(second!.stored.event)).toEqual(made[1]!.event);
    expect(second?.more).toBe(false);
    expect(await a.take()).toBeNull();
  });

  it("wakes only the accepting instance while it has a free slot; one without passes it on", async () => {
    const { stores, a, b, hear } = await fleet();
    let aFree = true;
    const ranOn: Record<string, string> = {};
    const took = new Map<string, () => void>();
    const ran = (id: string) => new Promise<void>((r) => took.set(id, r));
    const serve = (c: PgCoordinator, name: string, free: () => boolean) =>
      c.serve(free, (t) => {
        ranOn[t.id] = name;
        took.get(t.id)?.();
      });
    serve(a, "a", () => aFree);
    const queue = async (id: string, own = a.enqueue(id)) => {
      const record = sessionRecord({ id, state: "created" });
      await stores.sessions.commit(id, { record, was: null, own });
    };
    // A has a free slot: its NOTIFY names A, which takes the session.
    const one = ran("ses_w1");
    await queue("ses_w1");
    await hear(a.owner);
    await one;
    expect(ranOn.ses_w1).toBe("a");
    serve(b, "b", () => true);
    // A named itself, then had no slot when it came to take: it wakes every instance.
    const two = ran("ses_w2");
    const own = a.enqueue("ses_w2");
    expect(own).toMatchObject({ kind: "queue", waker: a.owner });
    aFree = false;
    await queue("ses_w2", own);
    await hear("");
    await two;
    expect(ranOn.ses_w2).toBe("b");
    // Without a free slot A names nobody: every instance is woken.
    expect(a.enqueue("ses_w3")).toEqual({ session: "ses_w3", kind: "queue" });
  });
});
