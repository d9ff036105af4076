import pg from "pg";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { sessionRecord } from "../../test/support/records.ts";
import type { JournalStep } from "../model/records.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { postgresTarget } from "../storage/drivers/postgres.ts";
import { ownerTables } from "../storage/drivers/postgres-owners.ts";
import { Fenced, StepClash } from "../storage/fence.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { PgCoordinator } from "./pg-coordinator.ts";

// The contract the fleet's guarantees rest on, against a real PostgreSQL and with no timing:
// who owns a session is the database's to say, and a write of a stale owner changes nothing.

const step = (seq: number, result: string): JournalStep =>
  ({ seq, kind: "activity", function: "f", result }) as unknown as JournalStep;

describe.skipIf(!warnIfNoPostgres("the PostgreSQL coordinator tests"))("PgCoordinator", () => {
  const open: { dispose(): Promise<void> }[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const o of open.splice(0).reverse()) await o.dispose();
  });
  afterAll(dropPostgresTestTables);

  /** A store and `n` instances on one fresh table, each joined; a connection for the test's SQL. */
  async function fleet(n: number, leaseMs = 60_000, onLost?: (id: string) => void) {
    const url = postgresTestUrl();
    const target = postgresTarget(url)!;
    const storage = createStorageFromUrl(url);
    const stores = createStores(storage);
    await storage.setItem("meta:probe", 1); // makes the tables
    open.push({ dispose: () => storage.dispose() });
    const sql = new pg.Pool({ connectionString: target.url, max: 2 });
    open.push({ dispose: () => sql.end() });
    const instances: PgCoordinator[] = [];
    for (let i = 0; i < n; i++) {
      const c = new PgCoordinator({ ...target, bus: true, leaseMs, ...(onLost && { onLost }) });
      await c.start();
      open.push(c);
      instances.push(c);
    }
    return { stores, instances, sql, t: ownerTables(target.table) };
  }

  /** A session queued as an accepted webhook queues it: record, index entry, owner row. */
  async function queue(stores: Stores, a: PgCoordinator, id: string) {
    const record = sessionRecord({ id, state: "created" });
    await stores.sessions.commit(id, { record, was: null, own: a.enqueue(id) });
    return record;
  }

  /** Declares `owner` dead by the database's clock: its heartbeat a lease and more ago. */
  async function stale(sql: pg.Pool, t: { instances: string }, owner: string) {
    await sql.query(
      `UPDATE ${t.instances} SET heartbeat_at = now() - interval '1 hour' WHERE id = $1`,
      [owner],
    );
  }

  it("refuses the write of an owner declared dead from the moment its session is queued again", async () => {
    const { stores, instances, sql, t } = await fleet(2);
    const [a, b] = instances as [PgCoordinator, PgCoordinator];
    const record = await queue(stores, a, "ses_s1");
    expect(await a.take()).toMatchObject({ id: "ses_s1", epoch: 1 });
    const running = { ...record, state: "running" as const };
    await stores.sessions.commit("ses_s1", {
      record: running,
      was: "created",
      own: a.write("ses_s1"),
    });

    await stale(sql, t, a.owner);
    expect(await b.reap()).toBe(1);
    // Queued again with its epoch moved, so that no write of its last run can match it.
    const row = await sql.query(`SELECT owner, epoch FROM ${t.owners} WHERE session_id = 'ses_s1'`);
    expect(row.rows).toEqual([{ owner: null, epoch: 2 }]);
    // Re-queued with its epoch moved: A's write is refused before anyone took the session.
    const late = { record: { ...running, state: "completed" as const }, was: "running" as const };
    await expect(
      stores.sessions.commit("ses_s1", { ...late, own: a.write("ses_s1", true) }),
    ).rejects.toBeInstanceOf(Fenced);
    const taken = await b.take();
    expect(taken?.id).toBe("ses_s1");
    expect(taken!.epoch).toBeGreaterThan(1);
    await expect(
      stores.sessions.commit("ses_s1", { ...late, own: a.write("ses_s1", true) }),
    ).rejects.toBeInstanceOf(Fenced);
    expect((await stores.sessions.get("ses_s1"))?.state).toBe("running");
    // B's lands, and its end removes the owner row.
    const ended = { record: { ...running, state: "error" as const }, was: "running" as const };
    await stores.sessions.commit("ses_s1", { ...ended, own: b.write("ses_s1", true) });
    expect((await stores.sessions.get("ses_s1"))?.state).toBe("error");
    expect((await stores.sessionIndex.entries(record.project_id)).map((e) => e.state)).toEqual([
      "error",
    ]);
    expect((await sql.query(`SELECT 1 FROM ${t.owners}`)).rowCount).toBe(0);
  });

  it("owns a session started here from its first write, and makes nothing when that write fails", async () => {
    const { stores, instances, sql, t } = await fleet(1);
    const a = instances[0]!;
    const record = sessionRecord({ id: "ses_own1", state: "created" });
    await stores.sessions.commit(record.id, { record, was: null, own: a.create(record.id) });
    const row = await sql.query(`SELECT owner, epoch, queued_at FROM ${t.owners}`);
    expect(row.rows).toEqual([{ owner: a.owner, epoch: 1, queued_at: null }]);
    // Its owner row cannot be made (one is there already): the statement fails whole.
    const bad = sessionRecord({ id: "ses_own2", state: "created" });
    await sql.query(
      `INSERT INTO ${t.owners} (session_id, owner, epoch) VALUES ('ses_own2', 'x', 7)`,
    );
    await expect(
      stores.sessions.commit(bad.id, { record: bad, was: null, own: a.create(bad.id) }),
    ).rejects.toThrow();
    expect(await stores.sessions.get(bad.id)).toBeNull();
    const rows = await sql.query(`SELECT session_id, epoch FROM ${t.owners} ORDER BY session_id`);
    expect(rows.rows).toEqual([
      { session_id: "ses_own1", epoch: 1 },
      { session_id: "ses_own2", epoch: 7 },
    ]);
  });

  it("refuses a new session owned by an instance declared dead: neither record nor owner row", async () => {
    const { stores, instances, sql, t } = await fleet(1);
    const a = instances[0]!;
    await sql.query(`UPDATE ${t.instances} SET dead = true WHERE id = $1`, [a.owner]);
    const record = sessionRecord({ id: "ses_dead1", state: "created" });
    const own = a.create(record.id);
    await expect(
      stores.sessions.commit(record.id, { record, was: null, own }),
    ).rejects.toBeInstanceOf(Fenced);
    expect(await stores.sessions.get(record.id)).toBeNull();
    expect((await sql.query(`SELECT 1 FROM ${t.owners}`)).rowCount).toBe(0);
  });

  it("hands each of 1,000 queued sessions to exactly one of eight racing takers", async () => {
    const { instances, sql, t } = await fleet(8);
    await sql.query(
      `INSERT INTO ${t.owners} (session_id, owner, epoch, queued_at) ` +
        "SELECT 'ses_' || lpad(i::text, 6, '0'), NULL, 0, now() FROM generate_series(1, 1000) AS i",
    );
    const got = await Promise.all(
      instances.map(async (c) => {
        const mine: string[] = [];
        for (let taken = await c.take(); taken; taken = await c.take()) mine.push(taken.id);
        return mine;
      }),
    );
    const all = got.flat();
    expect(all).toHaveLength(1000);
    expect(new Set(all).size).toBe(1000);
    expect(got.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
  });

  it("refuses a write of the same owner's earlier run: the epoch, not the owner, tells them apart", async () => {
    const { stores, instances } = await fleet(1);
    const a = instances[0]!;
    const record = await queue(stores, a, "ses_e1");
    expect(await a.take()).toMatchObject({ id: "ses_e1", epoch: 1 });
    // A write built in the first run, sent after the session went back on the queue and this
    // same instance took it again: the owner matches, the epoch does not.
    const early = a.write("ses_e1")!;
    await a.requeue("ses_e1");
    expect((await a.take())?.epoch).toBe(3);
    const running = { record: { ...record, state: "running" as const }, was: "created" as const };
    await expect(
      stores.sessions.commit("ses_e1", { ...running, own: early }),
    ).rejects.toBeInstanceOf(Fenced);
    expect((await stores.sessions.get("ses_e1"))?.state).toBe("created");
    await stores.sessions.commit("ses_e1", { ...running, own: a.write("ses_e1") });
    expect((await stores.sessions.get("ses_e1"))?.state).toBe("running");
  });

  it("lets a taker pass a queued session another transaction holds (SKIP LOCKED) instead of waiting", async () => {
    const { stores, instances, sql, t } = await fleet(1);
    const a = instances[0]!;
    await queue(stores, a, "ses_k1");
    await queue(stores, a, "ses_k2");
    const holder = await sql.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM ${t.owners} WHERE session_id = 'ses_k1' FOR UPDATE`);
      // Waiting on the lock would never end while the holder's transaction is open.
      const taken = await Promise.race([
        a.take(),
        new Promise((r) => setTimeout(() => r("waited on the lock"), 10_000)),
      ]);
      expect(taken).toMatchObject({ id: "ses_k2", epoch: 1 });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect((await a.take())?.id).toBe("ses_k1");
  });

  it("writes a journal step once: the same value again is no error, another value changes nothing", async () => {
    const { stores, instances } = await fleet(1);
    const a = instances[0]!;
    await queue(stores, a, "ses_j1");
    await a.take();
    await stores.sessions.commit("ses_j1", { steps: [step(1, "one")], own: a.write("ses_j1") });
    await stores.sessions.commit("ses_j1", { steps: [step(1, "one")], own: a.write("ses_j1") });
    const log = [{ t: "2025-01-01T00:00:00Z", kind: "print", text: "x" }] as never;
    await expect(
      stores.sessions.commit("ses_j1", { steps: [step(1, "two")], log, own: a.write("ses_j1") }),
    ).rejects.toBeInstanceOf(StepClash);
    expect(await stores.journals.list("ses_j1")).toEqual([step(1, "one")]);
    expect(await stores.logs.get("ses_j1")).toEqual([]); // the rest of that write went too
  });

  it("lets a pending retry's step be written again (its next attempt, then its result), never a finished one", async () => {
    const { stores, instances } = await fleet(1);
    const a = instances[0]!;
    await queue(stores, a, "ses_r1");
    await a.take();
    const pending = (attempts: number): JournalStep => {
      const s = { seq: 0, kind: "activity", function: "f", error: "503", attempts };
      return { ...s, retry_at: attempts } as unknown as JournalStep;
    };
    const write = (s: JournalStep) =>
      stores.sessions.commit("ses_r1", { steps: [s], own: a.write("ses_r1") });
    await write(pending(1));
    await write(pending(2)); // the second attempt failed too: the step moves on, as stored alone
    await write(step(0, "done"));
    expect(await stores.journals.list("ses_r1")).toEqual([step(0, "done")]);
    await expect(write(pending(3))).rejects.toBeInstanceOf(StepClash);
  });

  it("judges heartbeats by the database's clock, not the instance's", async () => {
    const { stores, instances } = await fleet(2);
    const [a, b] = instances as [PgCoordinator, PgCoordinator];
    await queue(stores, a, "ses_c1");
    await a.take();
    // This instance's clock runs an hour ahead: A's fresh heartbeat must not look stale.
    vi.useFakeTimers({ now: Date.now() + 3_600_000, toFake: ["Date"] });
    expect(await b.reap()).toBe(0);
    expect(a.write("ses_c1")).toBeDefined();
    const rec = { ...sessionRecord({ id: "ses_c1" }), state: "running" as const };
    await stores.sessions.commit("ses_c1", { record: rec, was: "created", own: a.write("ses_c1") });
  });

  it("an instance that finds itself declared dead lets its sessions go and joins again", async () => {
    const lost: string[] = [];
    const { stores, instances, sql, t } = await fleet(2, 300, (id) => lost.push(id));
    const [a, b] = instances as [PgCoordinator, PgCoordinator];
    await queue(stores, a, "ses_d1");
    await a.take();
    const before = a.owner;
    await sql.query(`UPDATE ${t.instances} SET dead = true WHERE id = $1`, [before]);
    await vi.waitFor(() => expect(lost).toEqual(["ses_d1"]), { timeout: 5000 });
    expect(a.owner).not.toBe(before);
    expect(a.holds("ses_d1")).toBe(false);
    // Its session is queued again (the reaper's), and another instance takes it.
    await vi.waitFor(async () => expect((await b.take())?.id).toBe("ses_d1"), { timeout: 5000 });
  });

  it("gives a once-only claim to one caller until it expires", async () => {
    const { instances } = await fleet(2);
    const [a, b] = instances as [PgCoordinator, PgCoordinator];
    const claims = await Promise.all([
      a.once("k", 60_000),
      b.once("k", 60_000),
      a.once("k", 60_000),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    await a.unclaim("k");
    expect(await b.once("k", 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(await a.once("k", 60_000)).toBe(true);
  });

  it("lets a held key be renewed by its holder only, and taken once its holder lets go", async () => {
    const { instances } = await fleet(2);
    const [a, b] = instances as [PgCoordinator, PgCoordinator];
    const first = await a.hold("g", null);
    expect(first).not.toBeNull();
    expect(await b.hold("g", null)).toBeNull();
    // Another's claim, however it is written, is not its own to renew.
    expect(await b.hold("g", "2000-01-01 00:00:00+00")).toBeNull();
    const renewed = await a.hold("g", first);
    expect(renewed).not.toBeNull();
    expect(renewed).not.toBe(first);
    // The claim a renewal replaced is no longer the holder's: neither renewed nor let go.
    expect(await a.hold("g", first)).toBeNull();
    await a.unclaim("g", first!);
    expect(await b.hold("g", null)).toBeNull();
    await a.unclaim("g", renewed!);
    const taken = await b.hold("g", null);
    expect(taken).not.toBeNull();
    expect(await a.hold("g", renewed)).toBeNull();
  });
});
