/**
 * One page of a filtered session list, read from the session index: the web UI's list and the
 * API's `GET /sessions?trigger=` both page through here, so the filter is written once.
 */
import type { SessionRecord, SessionState } from "../model/records.ts";
import type { SessionIndex } from "./record-types.ts";

export interface SessionQuery {
  /** A project id. */
  project?: string;
  /** A trigger name (of `project`, when given). */
  trigger?: string;
  state?: SessionState;
  /** From a previous page's `next`. */
  cursor?: string;
  limit?: number;
}

export interface SessionPage {
  sessions: SessionRecord[];
  /** Where the next (older) page starts; null at the end. */
  next: string | null;
  /** Index entries looked at for this page (bounded, whatever the store holds). */
  scanned: number;
}

/** Index entries a trigger filter asks for at once: from 100, doubling, up to 1,000. */
const FIRST_CHUNK = 100;
const MAX_CHUNK = 1000;

/**
 * Up to `limit` sessions matching `q`, newest first, from the session index (a project's
 * entries are one key range, one hash on Redis); the cursor is the id of the last session
 * looked at. The index knows project and state only, so a trigger filter reads records until
 * the page is full or `budget` index entries were looked at, and then gives a `next` to go on
 * from. `record` reads one session (the caller's freshest copy of it).
 * @example await scanSessions(stores.sessionIndex, (id) => stores.sessions.get(id), { trigger: "hook" }, { limit: 50, budget: 1000 })
 */
export async function scanSessions(
  index: SessionIndex,
  record: (id: string) => Promise<SessionRecord | null>,
  q: SessionQuery,
  bounds: { limit: number; budget: number },
): Promise<SessionPage> {
  const { limit, budget } = bounds;
  let before = q.cursor;
  const out: SessionRecord[] = [];
  let scanned = 0;
  while (out.length < limit && scanned < budget) {
    const want = q.trigger
      ? Math.min(Math.max(FIRST_CHUNK, scanned), MAX_CHUNK)
      : limit - out.length;
    const chunk = Math.min(want, budget - scanned);
    const entries = await index.page({
      projectId: q.project,
      state: q.state,
      before,
      limit: chunk,
    });
    if (entries.length === 0) return { sessions: out, next: null, scanned };
    const recs = await Promise.all(entries.map((e) => record(e.id)));
    for (const [i, e] of entries.entries()) {
      scanned++;
      before = e.id;
      const rec = recs[i];
      if (rec && matches(q, rec)) out.push({ ...rec });
      if (out.length >= limit) break;
    }
    if (entries.length < chunk && before === entries.at(-1)?.id) {
      return { sessions: out, next: null, scanned };
    }
  }
  return { sessions: out, next: before ?? null, scanned };
}

/**
 * Whether a session belongs in a list filtered by `q` (its record, not its index entry, which
 * may trail a state change by a write): the page above and the UI's live rows alike.
 * @example matches({ trigger: "hook" }, record)
 */
export function matches(q: Omit<SessionQuery, "cursor" | "limit">, rec: SessionRecord): boolean {
  return (
    (!q.project || rec.project_id === q.project) &&
    (!q.trigger || rec.trigger_name === q.trigger) &&
    (!q.state || rec.state === q.state)
  );
}
