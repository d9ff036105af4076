import pg from "pg";
import type { CapableDriver, DriverCapabilities } from "./capabilities.ts";
import type { BatchDriver, BatchOp } from "./lmdb.ts";
import { prefixRange } from "./lmdb.ts";
import { fencedWrite, ownerTablesDdl } from "./postgres-owners.ts";

/** @example postgresDriver({ url: "postgres://hookline@db:5432/hookline", table: "hookline_kv" }) */
export interface PostgresDriverOptions {
  /** A libpq-style connection URL (`postgres://user:pass@host:5432/db`). */
  url: string;
  /** The table holding the keys, made if missing. Default `hookline_kv`. */
  table?: string;
  /** Connections kept open at most. Default 10. */
  maxConnections?: number;
}

/** A table name we put into SQL text: plain lower-case identifiers only. */
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The connection URL and table of a `postgres://…[?table=name]` storage URL, else null.
 * `?table=` is ours and is taken off; every other parameter goes to the pg client.
 * @example postgresTarget("postgres://pg@db/app?table=kv") // { url: "postgres://pg@db/app", table: "kv" }
 */
export function postgresTarget(url: string): { url: string; table: string } | null {
  if (!/^postgres(ql)?:\/\//i.test(url)) return null;
  const parsed = new URL(url);
  const table = parsed.searchParams.get("table") ?? "hookline_kv";
  if (!TABLE_NAME.test(table)) {
    throw new Error(`SVC_STORAGE: ?table= takes a lower-case SQL name, got "${table}"`);
  }
  parsed.searchParams.delete("table");
  return { url: parsed.toString(), table };
}

function checkKey(key: string): string {
  if (typeof key !== "string" || key.length === 0) {
    throw new Error(`postgres driver: invalid key ${JSON.stringify(key)}`);
  }
  return key;
}

/** Every op's key checked, and its value a string or null (a removal). */
function checkOps(ops: BatchOp[]): BatchOp[] {
  for (const op of ops) {
    checkKey(op.key);
    if (op.value !== null && typeof op.value !== "string") {
      throw new Error(`postgres driver: value of ${op.key} is not a string`);
    }
  }
  return ops;
}

/**
 * Codes PostgreSQL answers when two `CREATE TABLE IF NOT EXISTS` race: the other one won. The
 * loser may trip over the table's row type (`42710`, "type … already exists"), its catalog row
 * (`23505`) or the table itself (`42P07`).
 */
const RACED = new Set(["23505", "42P07", "42710"]);

/**
 * An unstorage driver over one PostgreSQL table `(key text primary key, value text)`. Keys use
 * the "C" collation, so they sort by bytes and a base's keys are one range of the primary key's
 * index (`key >= 'logs:' AND key < 'logs;'`), with no LIKE and no escaping of `_` or `%`.
 * `batch` commits several writes in one transaction (see `atomicBatch`). The table is made on
 * first use, so making a Storage opens no connection.
 *
 * @example
 * const storage = createStorage({ driver: postgresDriver({ url: process.env.DATABASE_URL! }) });
 * await storage.setItem("projects:prj_1", { name: "shop" });
 * await storage.getKeys("projects"); // ["projects:prj_1"]
 */
export function postgresDriver(options: PostgresDriverOptions): BatchDriver & CapableDriver {
  if (!options.url) throw new Error("postgres driver: `url` is required");
  const table = options.table ?? "hookline_kv";
  if (!TABLE_NAME.test(table)) throw new Error(`postgres driver: bad table name "${table}"`);
  let pool: pg.Pool | undefined;
  let ready: Promise<pg.Pool> | undefined;

  const db = (): Promise<pg.Pool> => {
    if (!ready) {
      pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 10 });
      // An idle connection that breaks (a database restart) must not crash the process: the
      // pool drops it, and the next query opens another.
      pool.on("error", () => {});
      ready = createTable(pool, table).catch((e: unknown) => {
        ready = undefined; // the next call tries again: the database may be back
        throw e;
      });
    }
    return ready;
  };
  const query = async (text: string, values: unknown[] = []) => (await db()).query(text, values);
  const where = (base?: string) => {
    const range = prefixRange(base);
    return range.start
      ? { sql: "WHERE key >= $1 AND key < $2", values: [range.start, range.end] }
      : { sql: "", values: [] };
  };

  return {
    name: "postgres",
    options,
    capabilities: { swap: swapping(table, query), keyRange: ranging(table, query) },
    getInstance: () => pool,
    async hasItem(key) {
      const r = await query(`SELECT 1 FROM ${table} WHERE key = $1`, [checkKey(key)]);
      return (r.rowCount ?? 0) > 0;
    },
    async getItem(key) {
      const r = await query(`SELECT value FROM ${table} WHERE key = $1`, [checkKey(key)]);
      return (r.rows[0]?.value as string | undefined) ?? null;
    },
    async setItem(key, value) {
      await query(
        `INSERT INTO ${table} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [checkKey(key), value],
      );
    },
    async removeItem(key) {
      await query(`DELETE FROM ${table} WHERE key = $1`, [checkKey(key)]);
    },
    async getKeys(base) {
      const w = where(base);
      const r = await query(`SELECT key FROM ${table} ${w.sql} ORDER BY key`, w.values);
      return r.rows.map((row) => row.key as string);
    },
    async clear(base) {
      const w = where(base);
      await query(`DELETE FROM ${table} ${w.sql}`, w.values);
    },
    async dispose() {
      const closing = pool;
      pool = undefined;
      ready = undefined;
      await closing?.end();
    },
    async batch(ops) {
      if (checkOps(ops).length > 0) await writeAll(await db(), table, ops);
    },
    async fenced(ops, own) {
      await fencedWrite(await db(), table, checkOps(ops), own);
    },
  };
}

/** A key range walked on the primary key's index (DriverCapabilities.keyRange). */
function ranging(
  table: string,
  query: (text: string, values: unknown[]) => Promise<pg.QueryResult>,
): NonNullable<DriverCapabilities["keyRange"]> {
  return async ({ start, end, reverse, limit }) => {
    const order = reverse ? "DESC" : "ASC";
    const cap = limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(limit))}`;
    const sql = `SELECT key FROM ${table} WHERE key >= $1 AND key < $2 ORDER BY key ${order}${cap}`;
    const r = await query(sql, [start, end]);
    return r.rows.map((row) => row.key as string);
  };
}

/**
 * Compare-and-set of one key's value (DriverCapabilities.swap): one conditional statement.
 */
function swapping(
  table: string,
  query: (text: string, values?: unknown[]) => Promise<pg.QueryResult>,
): NonNullable<DriverCapabilities["swap"]> {
  return async (key, expected, next) => {
    checkKey(key);
    const r =
      next === null
        ? await query(`DELETE FROM ${table} WHERE key = $1 AND value = $2`, [key, expected])
        : expected === null
          ? await query(
              `INSERT INTO ${table} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
              [key, next],
            )
          : await query(`UPDATE ${table} SET value = $3 WHERE key = $1 AND value = $2`, [
              key,
              expected,
              next,
            ]);
    return (r.rowCount ?? 0) > 0;
  };
}

/**
 * Makes the table, and the owner tables a fleet coordinates through (postgres-owners.ts), if
 * missing; a race with another instance making them is no error.
 */
async function createTable(p: pg.Pool, table: string): Promise<pg.Pool> {
  const create = `CREATE TABLE IF NOT EXISTS ${table} (key text COLLATE "C" PRIMARY KEY, value text NOT NULL)`;
  for (const statement of [create, ...ownerTablesDdl(table)]) {
    try {
      await p.query(statement);
    } catch (e) {
      if (!RACED.has((e as { code?: string }).code ?? "")) throw e;
    }
  }
  return p;
}

/**
 * Every op or none, in one statement (one round trip, atomic by itself): the keys removed and
 * the keys written, each key once with its last op. An instance that stalls mid-batch cannot
 * leave a transaction half sent, holding its rows, to finish after others wrote them.
 */
async function writeAll(p: pg.Pool, table: string, ops: BatchOp[]): Promise<void> {
  const last = new Map<string, string | null>();
  for (const op of ops) last.set(op.key, op.value);
  const keys = [...last.keys()].sort();
  const gone = keys.filter((k) => last.get(k) === null);
  const kept = keys.filter((k) => last.get(k) !== null);
  await p.query(
    `WITH gone AS (DELETE FROM ${table} WHERE key = ANY($1::text[])) ` +
      `INSERT INTO ${table} (key, value) SELECT * FROM unnest($2::text[], $3::text[]) ` +
      "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
    [gone, kept, kept.map((k) => last.get(k) as string)],
  );
}
