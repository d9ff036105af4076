import type pg from "pg";
import { ownerTables } from "../storage/drivers/postgres-owners.ts";

/**
 * What the taker of a queued session reads before it runs it, as stored (the key table's text,
 * null when missing): the session's record, the event that starts it, and its log. The event is
 * the one the record names (`"event_id":"evt_…"` in its text); the reader checks it is so.
 */
export interface StoredParts {
  record: string | null;
  event: string | null;
  log: string | null;
}

/** A queued session taken, the parts it needs as stored, and whether others are still queued. */
export interface TakenRow {
  id: string;
  epoch: number;
  stored: StoredParts;
  more: boolean;
}

/**
 * Takes the oldest queued session for `owner` (SKIP LOCKED: takers never wait on each other),
 * only while `owner` is alive, and reads in the same statement what its taker needs: its record,
 * its event and its log (keys `sessions:<id>`, `events:<event id>`, `logs:<id>`, as
 * src/storage/session-records.ts lays them out), and whether more sessions are queued. One
 * round trip instead of four. Null when nothing is queued (or `owner` is declared dead).
 * @example const row = await takeOldest(pool, "hookline_kv", "a1b2.0"); // { id, epoch, stored, more }
 */
export async function takeOldest(
  pool: pg.Pool,
  table: string,
  owner: string,
): Promise<TakenRow | null> {
  const { owners, instances } = ownerTables(table);
  const value = (key: string) => `(SELECT value FROM ${table} WHERE key = ${key})`;
  const r = await pool.query({
    name: `hookline_take_${table}`,
    text:
      `WITH t AS (UPDATE ${owners} SET owner = $1, epoch = epoch + 1, queued_at = NULL ` +
      `WHERE session_id = (SELECT session_id FROM ${owners} WHERE owner IS NULL ORDER BY queued_at LIMIT 1 FOR UPDATE SKIP LOCKED) ` +
      `AND owner IS NULL AND EXISTS (SELECT 1 FROM ${instances} WHERE id = $1 AND NOT dead) ` +
      "RETURNING session_id, epoch), " +
      `r AS (SELECT t.session_id, t.epoch, ${value("'sessions:' || t.session_id")} AS record FROM t) ` +
      "SELECT r.session_id, r.epoch, r.record, " +
      `${value(`'events:' || substring(r.record from '"event_id":"(evt_[0-9a-z]+)"')`)} AS event, ` +
      `${value("'logs:' || r.session_id")} AS log, ` +
      `EXISTS (SELECT 1 FROM ${owners} q WHERE q.owner IS NULL AND q.session_id <> r.session_id) AS more ` +
      "FROM r",
    values: [owner],
  });
  const row = r.rows[0] as
    | { session_id: string; epoch: number; record: string | null; event: string | null }
    | undefined;
  if (!row) return null;
  const { log, more } = r.rows[0] as { log: string | null; more: boolean };
  return {
    id: row.session_id,
    epoch: row.epoch,
    stored: { record: row.record, event: row.event, log },
    more,
  };
}
