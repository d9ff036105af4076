import type pg from "pg";
import { Fenced, type OwnerWrite, StepClash, WRITE_ONCE_PREFIX } from "../fence.ts";
import type { BatchOp } from "./lmdb.ts";

/**
 * The tables beside the key-value table `<table>` that a fleet coordinates through (see
 * src/cluster/pg-coordinator.ts): one narrow owner row per live session, one heartbeat row per
 * instance, and once-only claims. Their names are the key table's with a suffix.
 * @example ownerTables("hookline_kv").owners // "hookline_kv_owners"
 */
export function ownerTables(table: string) {
  return {
    owners: `${table}_owners`,
    instances: `${table}_instances`,
    once: `${table}_once`,
    /** The channel a queued session is announced on (LISTEN/NOTIFY). */
    channel: `${table}_queued`,
  };
}

/**
 * The statements that make the coordination tables, each idempotent. `owner` null: queued
 * since `queued_at`; `epoch` moves at every take and every re-queue, so a write carrying an
 * older one is refused.
 */
export function ownerTablesDdl(table: string): string[] {
  const t = ownerTables(table);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.owners} (session_id text COLLATE "C" PRIMARY KEY, owner text, epoch integer NOT NULL DEFAULT 0, queued_at timestamptz)`,
    `CREATE INDEX IF NOT EXISTS ${t.owners}_queue ON ${t.owners} (queued_at) WHERE owner IS NULL`,
    `CREATE INDEX IF NOT EXISTS ${t.owners}_owner ON ${t.owners} (owner) WHERE owner IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${t.instances} (id text PRIMARY KEY, heartbeat_at timestamptz NOT NULL, dead boolean NOT NULL DEFAULT false)`,
    `CREATE TABLE IF NOT EXISTS ${t.once} (key text PRIMARY KEY, until timestamptz NOT NULL)`,
  ];
}

/**
 * Whether the stored journal step in `column` is a pending retry (attempts failed, the next one
 * due: `retry_at` set). Such a step is written again as its attempts go on, then replaced by
 * its result (src/sessions/retries.ts): the one step that is not written once.
 */
const pending = (column: string) =>
  `(CASE WHEN left(${column}, 1) = '{' THEN coalesce(${column}::jsonb ? 'retry_at', false) ELSE false END)`;

/**
 * One session's batch and its owner row in one statement (one round trip, atomic by itself):
 * - the write lands only if `own` allows it: a `fence` needs the owner row to name this owner
 *   and epoch (locked for the statement, so a take-over either waits for it or refuses it); an
 *   `own` (a new session owned here) needs the owner's instance alive, not declared dead;
 * - journal steps are inserted once: a step stored with another value refuses the whole write
 *   (but a pending retry's, which its next attempt or its result replaces);
 * - `queue` and `own` make the owner row, `release` removes it; a queued one is announced
 *   (NOTIFY, naming its waker if it has one).
 * Rejects `Fenced` or `StepClash` with nothing written.
 */
export async function fencedWrite(
  p: pg.Pool,
  table: string,
  ops: BatchOp[],
  own: OwnerWrite,
): Promise<void> {
  const t = ownerTables(table);
  const last = new Map<string, string | null>();
  for (const op of ops) last.set(op.key, op.value);
  const keys = [...last.keys()].sort();
  const once = keys.filter((k) => k.startsWith(WRITE_ONCE_PREFIX) && last.get(k) !== null);
  const rest = keys.filter((k) => !once.includes(k));
  const gone = rest.filter((k) => last.get(k) === null);
  const kept = rest.filter((k) => last.get(k) !== null);
  const owner = own.kind === "queue" ? null : own.owner;
  const epoch = own.kind === "fence" ? own.epoch : 0;
  const release = own.kind === "fence" && own.release === true;
  const go = "(SELECT ok FROM go)";
  // Prepared once per connection (named): the statement is planned once, not at every write.
  const r = await p.query({
    name: `hookline_fenced_${table}`,
    text:
      `WITH own AS (SELECT 1 FROM ${t.owners} WHERE $8 = 'fence' AND session_id = $6 AND owner = $7 AND epoch = $9 FOR NO KEY UPDATE), ` +
      `clash AS (SELECT s.key FROM unnest($4::text[], $5::text[]) AS s(key, value) JOIN ${table} k ON k.key = s.key WHERE k.value <> s.value AND NOT ${pending("k.value")}), ` +
      `live AS (SELECT 1 FROM ${t.instances} WHERE $8 = 'own' AND id = $7 AND NOT dead), ` +
      `go AS (SELECT (CASE $8 WHEN 'fence' THEN EXISTS (SELECT 1 FROM own) WHEN 'own' THEN EXISTS (SELECT 1 FROM live) ELSE true END) ` +
      "AND NOT EXISTS (SELECT 1 FROM clash) AS ok), " +
      `gone AS (DELETE FROM ${table} WHERE key = ANY($1::text[]) AND ${go}), ` +
      `put AS (INSERT INTO ${table} (key, value) SELECT * FROM unnest($2::text[], $3::text[]) WHERE ${go} ` +
      "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value), " +
      `steps AS (INSERT INTO ${table} (key, value) SELECT * FROM unnest($4::text[], $5::text[]) WHERE ${go} ` +
      `ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value WHERE ${pending(`${table}.value`)}), ` +
      `made AS (INSERT INTO ${t.owners} (session_id, owner, epoch, queued_at) ` +
      `SELECT $6, $7, CASE WHEN $8 = 'own' THEN 1 ELSE 0 END, CASE WHEN $8 = 'queue' THEN now() END WHERE $8 <> 'fence' AND ${go}), ` +
      `freed AS (DELETE FROM ${t.owners} WHERE $10 AND session_id = $6 AND ${go}), ` +
      `told AS (SELECT pg_notify($11, $12) WHERE $8 = 'queue' AND ${go}) ` +
      "SELECT (SELECT ok FROM go) AS ok, (SELECT array_agg(key) FROM clash) AS clash, (SELECT count(*) FROM told) AS told",
    values: [
      gone,
      kept,
      kept.map((k) => last.get(k) as string),
      once,
      once.map((k) => last.get(k) as string),
      own.session,
      owner,
      own.kind,
      epoch,
      release,
      t.channel,
      own.kind === "queue" ? (own.waker ?? "") : "",
    ],
  });
  const row = r.rows[0] as { ok: boolean; clash: string[] | null };
  if (row.clash?.length) throw new StepClash(own.session, row.clash);
  if (!row.ok) throw new Fenced(own.session);
}
