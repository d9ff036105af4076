import { randomBytes } from "node:crypto";
import pg from "pg";
import { ownerTables } from "../storage/drivers/postgres-owners.ts";
import type { OwnerWrite } from "../storage/fence.ts";
import * as fleet from "./pg-membership.ts";
import { type StoredParts, takeOldest } from "./pg-take.ts";
import { QueueLoop } from "./queue-loop.ts";

export type { StoredParts } from "./pg-take.ts";

export interface CoordinatorOptions {
  /** A libpq-style URL and the key table (`?table=`): the owner tables sit beside it. */
  url: string;
  table: string;
  /**
   * Whether instances share a bus (Redis). Without one an instance must run alone: a second
   * one is refused at start, as is one with a bus beside one without.
   */
  bus: boolean;
  /**
   * How long an instance may go without a heartbeat before the others declare it dead (judged
   * by the database's clock). Heartbeats go every third of it. Default 15 s.
   */
  leaseMs?: number;
  /** Told when this instance loses a session it owned (fenced, or declared dead). */
  onLost?: (sessionId: string, why: string) => void;
  log?: (line: string) => void;
}

/** A session this instance has just taken off the queue, at the epoch its writes carry. */
export interface ClaimedSession {
  id: string;
  epoch: number;
}

/**
 * The fleet's owners, decided by PostgreSQL (as Temporal's SQL store and DBOS do): one owner row
 * per live session (owner, epoch, queued since), one heartbeat row per instance. Taking a
 * queued session is one `UPDATE … FOR UPDATE SKIP LOCKED` that moves its epoch; any instance
 * declares instances dead whose heartbeat is older than the lease by the database's `now()`
 * and re-queues their sessions with the epoch moved, so every late write of theirs is refused
 * (postgres-owners.ts `fencedWrite`). An instance that finds itself declared dead lets its
 * sessions go and joins again under a new owner id.
 * @example const c = new PgCoordinator({ url, table: "hookline_kv", bus: true }); await c.start();
 */
export class PgCoordinator {
  readonly #o: Required<Omit<CoordinatorOptions, "onLost" | "log">> & CoordinatorOptions;
  readonly #t: ReturnType<typeof ownerTables>;
  readonly #pool: pg.Pool;
  /** The connection that LISTENs for queued sessions and holds the alone/bus lock. */
  #listener: fleet.QueueListener | null = null;
  #base = randomBytes(8).toString("hex");
  #generation = 0;
  /** Sessions this instance owns, by id: the epoch their writes carry. */
  readonly #held = new Map<string, number>();
  #timers: NodeJS.Timeout[] = [];
  /** The loop that takes queued sessions (`serve`). */
  readonly #queue = new QueueLoop({
    take: () => this.take(),
    passOn: () => this.#pool.query("SELECT pg_notify($1, '')", [this.#t.channel]).then(() => {}),
  });
  #stopped = false;

  constructor(opts: CoordinatorOptions) {
    this.#o = { leaseMs: 15_000, ...opts };
    this.#t = ownerTables(opts.table);
    this.#pool = new pg.Pool({ connectionString: opts.url, max: 4 });
    this.#pool.on("error", () => {});
  }

  /** The owner id this instance writes under now (a new one after it was declared dead). */
  get owner(): string {
    return `${this.#base}.${this.#generation}`;
  }

  /**
   * Joins the fleet: the alone/bus rule checked (a session-long advisory lock, exclusive alone
   * and shared with a bus), the heartbeat row written, owner rows made for an older store's live
   * sessions, then heartbeats and the reaper every third of a lease. Rejects with one line
   * when another instance's kind forbids this one.
   */
  async start(): Promise<void> {
    const { url, table, bus, log } = this.#o;
    const notified = (w: string) => this.#queue.notified(w, this.owner);
    this.#listener = new fleet.QueueListener({ url, table, bus, log, notified });
    await this.#listener.start();
    // This instance's heartbeat row, after the upgrade of an older store (see joinFleet).
    await fleet.joinFleet(this.#pool, table, this.owner, !bus);
    const every = this.#o.leaseMs / 3;
    this.#timers.push(
      setInterval(() => void this.#beat().catch(() => {}), every),
      setInterval(() => void this.reap().catch(() => {}), every),
    );
    for (const t of this.#timers) t.unref();
    void this.reap().catch(() => {});
  }

  /**
   * The heartbeat. No row to renew means the others declared this instance dead (it stalled or
   * was cut off past the lease): every session it held is lost (already re-queued, its writes
   * refused), and it joins again under a new owner id.
   */
  async #beat(): Promise<void> {
    const { instances } = this.#t;
    const was = this.owner;
    const r = await this.#pool.query(
      `UPDATE ${instances} SET heartbeat_at = now() WHERE id = $1 AND NOT dead`,
      [was],
    );
    if (r.rowCount !== 0 || this.owner !== was || this.#stopped) return;
    const lost = [...this.#held.keys()];
    this.#held.clear();
    this.#generation++;
    await this.#pool.query(`INSERT INTO ${instances} (id, heartbeat_at) VALUES ($1, now())`, [
      this.owner,
    ]);
    this.#o.log?.(
      `cluster: this instance was declared dead (no heartbeat for a lease); ${lost.length} sessions left to the others; joined again as ${this.owner}`,
    );
    for (const id of lost) this.#o.onLost?.(id, "declared dead");
  }

  /**
   * Declares dead the instances whose heartbeat is older than the lease by the database's
   * clock, and queues their sessions again with the epoch moved, in one statement; also any
   * session owned by an instance that is no longer alive. Any instance may run it, any time.
   * Resolves with how many sessions it queued.
   */
  reap(): Promise<number> {
    return fleet.reapDead(this.#pool, this.#o.table, this.#o.leaseMs);
  }

  /**
   * Takes the oldest queued session (SKIP LOCKED: takers never wait on each other), with what
   * its taker reads before running it (its record, event and log, as stored), and whether more
   * are queued, in one statement (pg-take.ts); null if none.
   */
  async take(): Promise<(ClaimedSession & { stored: StoredParts; more: boolean }) | null> {
    const row = await takeOldest(this.#pool, this.#o.table, this.owner);
    if (row) this.#held.set(row.id, row.epoch);
    return row;
  }

  /** Takes one queued session by id (to stop it without running it); false if not queued. */
  async takeQueued(id: string): Promise<boolean> {
    const { owners, instances } = this.#t;
    const r = await this.#pool.query(
      `UPDATE ${owners} SET owner = $2, epoch = epoch + 1, queued_at = NULL WHERE session_id = $1 AND owner IS NULL ` +
        `AND EXISTS (SELECT 1 FROM ${instances} WHERE id = $2 AND NOT dead) RETURNING epoch`,
      [id, this.owner],
    );
    const row = r.rows[0] as { epoch: number } | undefined;
    if (!row) return false;
    this.#held.set(id, row.epoch);
    return true;
  }

  /** Sessions queued and not taken, across the fleet. */
  async queued(): Promise<number> {
    const r = await this.#pool.query(
      `SELECT count(*)::int AS n FROM ${this.#t.owners} WHERE owner IS NULL`,
    );
    return (r.rows[0] as { n: number }).n;
  }

  /** What the first write of a new session owned here carries (its owner row, epoch 1). */
  create(id: string): OwnerWrite {
    this.#held.set(id, 1);
    return { session: id, kind: "own", owner: this.owner };
  }

  /**
   * What the first write of a new queued session carries (its owner row, queued). Its NOTIFY
   * names this instance the one to take it while it has a free slot: the others are not woken
   * for it (they look by themselves every POLL_MS); without one, every instance is.
   */
  enqueue(id: string): OwnerWrite {
    if (!this.#queue.named()) return { session: id, kind: "queue" };
    return { session: id, kind: "queue", waker: this.owner };
  }

  /** What a write of session `id` carries while this instance owns it; undefined when it does not. */
  write(id: string, release = false): OwnerWrite | undefined {
    const epoch = this.#held.get(id);
    if (epoch === undefined) return undefined;
    return { session: id, kind: "fence", owner: this.owner, epoch, release };
  }

  /** Whether this instance owns the session now. */
  holds(id: string): boolean {
    return this.#held.has(id);
  }

  /** The session is no longer this instance's (its end removed the owner row, or a create failed). */
  forget(id: string): void {
    this.#held.delete(id);
  }

  /** A write of the session was refused: another instance owns it now. */
  fenced(id: string): void {
    if (this.#held.delete(id)) this.#o.onLost?.(id, "fenced");
  }

  /**
   * Queues a session this instance owns again, epoch moved (it stops here: another instance
   * takes it up at once).
   */
  async requeue(id: string): Promise<void> {
    const epoch = this.#held.get(id);
    if (epoch === undefined) return;
    this.#held.delete(id);
    const { owners, channel } = this.#t;
    await this.#pool.query(
      `WITH m AS (UPDATE ${owners} SET owner = NULL, epoch = epoch + 1, queued_at = now() WHERE session_id = $1 AND owner = $2 AND epoch = $3 RETURNING 1) ` +
        "SELECT pg_notify($4, '') FROM m",
      [id, this.owner, epoch, channel],
    );
  }

  /** Removes the owner row of a session this instance owns (it ended, or has no record). */
  async release(id: string): Promise<void> {
    const epoch = this.#held.get(id);
    if (epoch === undefined) return;
    this.#held.delete(id);
    await this.#pool.query(
      `DELETE FROM ${this.#t.owners} WHERE session_id = $1 AND owner = $2 AND epoch = $3`,
      [id, this.owner, epoch],
    );
  }

  /** True for the one caller across the fleet that claims `key` within `ttlMs` (see claimOnce). */
  once = (key: string, ttlMs: number) => fleet.claimOnce(this.#pool, this.#o.table, key, ttlMs);

  /** `key` claimed for a lease, or renewed while `held` is still its claim (see holdClaim). */
  hold(key: string, held: string | null): Promise<string | null> {
    return fleet.holdClaim(this.#pool, this.#o.table, key, this.#o.leaseMs, held);
  }

  /** Lets `key` be claimed again early (only while `held`, given, is its claim). */
  unclaim(key: string, held?: string): Promise<void> {
    return fleet.unclaimOnce(this.#pool, this.#o.table, key, held);
  }

  /**
   * Takes queued sessions while `free()`, handing each to `run` (this instance owns it then):
   * woken by a NOTIFY naming it or nobody, or `poke`, and looking by itself every POLL_MS.
   */
  serve(
    free: () => boolean,
    run: (taken: ClaimedSession & { stored?: StoredParts }) => void,
  ): void {
    this.#queue.serve(free, run);
  }

  /** A slot came free (a session here ended): look now if the loop waited for one. */
  poke(): void {
    this.#queue.freed();
  }

  /**
   * Stops heartbeats, the reaper and the queue, and says this instance is gone: the next reap
   * of any instance queues what it still owned, without waiting for the lease.
   */
  async dispose(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const t of this.#timers) clearInterval(t);
    await this.#queue.stop();
    const gone = `UPDATE ${this.#t.instances} SET dead = true WHERE id = $1`;
    await this.#pool.query(gone, [this.owner]).catch(() => {});
    await this.#listener?.dispose();
    await this.#pool.end().catch(() => {});
  }
}
