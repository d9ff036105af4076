import pg from "pg";
import { ownerTables } from "../storage/drivers/postgres-owners.ts";

/**
 * The connection that holds the alone/bus advisory lock (exclusive without a bus, shared with
 * one: a second lone instance, or one with a bus beside a lone one, is refused at start) and
 * LISTENs for queued sessions. One that drops (PostgreSQL restarted, the network cut) is opened
 * again every second until it is back: meanwhile the queue is looked at by polling alone.
 * @example const l = new QueueListener({ url, table, bus: true, notified: wake }); await l.start();
 */
export class QueueListener {
  #o: QueueListenerOptions;
  #client: pg.Client | null = null;
  #stopped = false;

  constructor(opts: QueueListenerOptions) {
    this.#o = opts;
  }

  /** Rejects with one line when the lock is held the other way. */
  async start(): Promise<void> {
    this.#client = await this.#open();
  }

  async #open(): Promise<pg.Client> {
    const { url, table, bus } = this.#o;
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    await client.connect().catch((e: unknown) => {
      throw new Error(
        `SVC_STORAGE: cannot reach PostgreSQL at ${new URL(url).host}: ${(e as Error).message}`,
      );
    });
    const fn = bus ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock";
    const r = await client.query(`SELECT ${fn}(hashtext($1)) AS ok`, [`hookline:${table}`]);
    if (r.rows[0]?.ok !== true) {
      await client.end().catch(() => {});
      throw new Error(
        bus
          ? `SVC_STORAGE: an instance without SVC_REDIS_URL is using PostgreSQL table ${table}; instances sharing a store must all set the same SVC_REDIS_URL`
          : `SVC_STORAGE: another instance is using PostgreSQL table ${table}; to run several, set the same SVC_REDIS_URL on every instance (docs/scale-out.md)`,
      );
    }
    client.on("notification", (m) => this.#o.notified(m.payload ?? ""));
    client.once("end", () => {
      if (this.#client !== client) return;
      this.#client = null;
      void this.#reopen();
    });
    await client.query(`LISTEN ${ownerTables(table).channel}`);
    return client;
  }

  async #reopen(): Promise<void> {
    while (!this.#stopped && !this.#client) {
      await new Promise((r) => setTimeout(r, 1000).unref());
      if (this.#stopped) return;
      try {
        this.#client = await this.#open();
      } catch (e) {
        this.#o.log?.(
          `cluster: listening for queued sessions again failed: ${(e as Error).message}`,
        );
      }
    }
  }

  async dispose(): Promise<void> {
    this.#stopped = true;
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }
}

export interface QueueListenerOptions {
  url: string;
  table: string;
  bus: boolean;
  /** A session was queued (NOTIFY), for the instance `waker` names ("": any). */
  notified: (waker: string) => void;
  log?: ((line: string) => void) | undefined;
}

/**
 * Writes instance `owner`'s heartbeat row, in one transaction under a lock of its own: first,
 * owner rows for the live sessions of a store written before owners were kept (its `created`
 * and `running` index entries), queued, once (`meta:owners` marks it done). Alone, every other
 * instance is gone: their sessions are queued again at once.
 * @example await joinFleet(pool, "hookline_kv", "a1b2.0", false);
 */
export async function joinFleet(
  pool: pg.Pool,
  table: string,
  owner: string,
  alone: boolean,
): Promise<void> {
  const { owners, instances } = ownerTables(table);
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`hookline:join:${table}`]);
    const marked = await c.query(`SELECT 1 FROM ${table} WHERE key = 'meta:owners'`);
    if (marked.rowCount === 0) {
      await c.query(
        `INSERT INTO ${owners} (session_id, owner, epoch, queued_at) ` +
          `SELECT split_part(key, ':', 4), NULL, 1, now() FROM ${table} ` +
          `WHERE key >= 'session-index:' AND key < 'session-index;' AND split_part(key, ':', 3) IN ('created', 'running') ` +
          "AND split_part(key, ':', 4) <> '' ON CONFLICT (session_id) DO NOTHING",
      );
      await c.query(
        `INSERT INTO ${table} (key, value) VALUES ('meta:owners', '1') ON CONFLICT DO NOTHING`,
      );
    }
    if (alone) await c.query(`UPDATE ${instances} SET dead = true WHERE NOT dead`);
    await c.query(`INSERT INTO ${instances} (id, heartbeat_at) VALUES ($1, now())`, [owner]);
    await c.query(
      `UPDATE ${owners} SET owner = NULL, epoch = epoch + 1, queued_at = now() ` +
        `WHERE owner IS NOT NULL AND owner NOT IN (SELECT id FROM ${instances} WHERE NOT dead)`,
    );
    await c.query("COMMIT");
  } catch (e) {
    await c.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

/**
 * Declares dead the instances whose heartbeat is older than `leaseMs` by the database's clock,
 * and queues their sessions again with the epoch moved, in one statement; also any session
 * owned by an instance no longer alive. Clears old dead rows and expired once-claims. Any
 * instance may run it, any time. Resolves with how many sessions it queued.
 * @example await reapDead(pool, "hookline_kv", 15_000) // 0
 */
export async function reapDead(pool: pg.Pool, table: string, leaseMs: number): Promise<number> {
  const { owners, instances, once, channel } = ownerTables(table);
  const r = await pool.query(
    `WITH dead AS (UPDATE ${instances} SET dead = true WHERE NOT dead AND heartbeat_at < now() - make_interval(secs => $1) RETURNING id), ` +
      `moved AS (UPDATE ${owners} SET owner = NULL, epoch = epoch + 1, queued_at = now() WHERE owner IN (SELECT id FROM dead) ` +
      `OR (owner IS NOT NULL AND owner NOT IN (SELECT id FROM ${instances} WHERE NOT dead)) RETURNING 1), ` +
      `gc AS (DELETE FROM ${instances} WHERE dead AND heartbeat_at < now() - interval '1 day'), ` +
      `expired AS (DELETE FROM ${once} WHERE until < now() - interval '1 hour'), ` +
      `told AS (SELECT pg_notify($2, '') WHERE EXISTS (SELECT 1 FROM moved)) ` +
      "SELECT (SELECT count(*) FROM moved)::int AS n, (SELECT count(*) FROM told) AS t",
    [leaseMs / 1000, channel],
  );
  return (r.rows[0] as { n: number }).n;
}

/**
 * True for the one caller across the fleet that claims `key` within `ttlMs` (a schedule's slot,
 * an OAuth state's single use): a row that only an expired claim may take over.
 * @example await claimOnce(pool, "hookline_kv", "schedule:trg_1:2026-12-06T10:00", 600_000)
 */
export async function claimOnce(
  pool: pg.Pool,
  table: string,
  key: string,
  ttlMs: number,
): Promise<boolean> {
  const { once } = ownerTables(table);
  const r = await pool.query(
    `INSERT INTO ${once} (key, until) VALUES ($1, now() + make_interval(secs => $2)) ` +
      `ON CONFLICT (key) DO UPDATE SET until = EXCLUDED.until WHERE ${once}.until < now() RETURNING 1`,
    [key, ttlMs / 1000],
  );
  return (r.rowCount ?? 0) > 0;
}

/**
 * `key` held by one instance for `ttlMs` at a time: claimed when free (no row, or its time is
 * up), renewed while `held` (the claim's time as the last call gave it) is still the row's, so
 * only its holder renews it and another instance takes it once the holder stopped renewing.
 * Resolves with the claim to renew next, or null when another instance holds it.
 * @example const held = await holdClaim(pool, "hookline_kv", "discord-gateway:ab12", 15_000, null)
 */
export async function holdClaim(
  pool: pg.Pool,
  table: string,
  key: string,
  ttlMs: number,
  held: string | null,
): Promise<string | null> {
  const { once } = ownerTables(table);
  const r = await pool.query(
    `INSERT INTO ${once} (key, until) VALUES ($1, now() + make_interval(secs => $2)) ` +
      `ON CONFLICT (key) DO UPDATE SET until = EXCLUDED.until WHERE ${once}.until < now() ` +
      `OR ${once}.until = $3::timestamptz RETURNING until::text AS until`,
    [key, ttlMs / 1000, held],
  );
  return (r.rows[0] as { until: string } | undefined)?.until ?? null;
}

/** Lets `key` be claimed again before its time is up (only while `held`, given, is its claim). */
export async function unclaimOnce(
  pool: pg.Pool,
  table: string,
  key: string,
  held?: string,
): Promise<void> {
  const { once } = ownerTables(table);
  const mine = held === undefined ? "" : " AND until = $2::timestamptz";
  await pool.query(
    `DELETE FROM ${once} WHERE key = $1${mine}`,
    held === undefined ? [key] : [key, held],
  );
}
