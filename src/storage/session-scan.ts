/**
 * One page of a filtered session list, read from the session index: the web UI's list and the
 * API's `GET /sessions?trigger=` both page through here, so the filter is written once.
 */
import { idAt, idTime } from "../ids.ts";
import type { SessionLogEntry, SessionRecord, SessionState } from "../model/records.ts";
import type { SessionIndex } from "./record-types.ts";

export interface SessionQuery {
  /** A project id. */
  project?: string;
  /** A trigger name (of `project`, when given). */
  trigger?: string;
  state?: SessionState;
  /** Created at or after this time (epoch ms): ids sort by time, so the scan stops there. */
  since?: number;
  /** Created before this time (epoch ms): the scan starts there. */
  until?: number;
  /**
   * A session id (that session), an event id (its sessions), or text found in the session's
   * error or prints (case-insensitive).
   */
  search?: string;
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
  bounds: { limit: number; budget: number; log?: (id: string) => Promise<SessionLogEntry[]> },
): Promise<SessionPage> {
  const { limit, budget } = bounds;
  const search = q.search?.trim() ?? "";
  if (/^ses_[0-9a-z]{26}$/.test(search)) {
    // One session: read it, not the index.
    const rec = await record(search);
    const ok = rec && matches(q, rec) && inRange(q, rec.id);
    return { sessions: ok ? [{ ...rec }] : [], next: null, scanned: 1 };
  }
  const found = searchTest(search, bounds.log);
  const until = q.until === undefined ? undefined : idAt("ses", q.until);
  // The older of the cursor and the range's end (ids compare as text).
  let before = [q.cursor, until].filter((x): x is string => !!x).sort()[0];
  const since = lowerBound(q, search);
  const out: SessionRecord[] = [];
  let scanned = 0;
  const sifted = Boolean(q.trigger || search);
  while (out.length < limit && scanned < budget) {
    // Filtered, the index is read a chunk at a time (100, doubling, at most 1,000), so a page
    // that fills early reads no further.
    const want = sifted ? Math.min(Math.max(FIRST_CHUNK, scanned), MAX_CHUNK) : limit - out.length;
    const chunk = Math.min(want, budget - scanned);
    const entries = await index.page({
      projectId: q.project,
      state: q.state,
      before,
      since,
      limit: chunk,
    });
    if (entries.length === 0) return { sessions: out, next: null, scanned };
    const recs = await Promise.all(
      entries.map(async (e) => {
        const rec = await record(e.id);
        return rec && matches(q, rec) && (await found(rec)) ? rec : null;
      }),
    );
    for (const [i, e] of entries.entries()) {
      if (!inRange(q, e.id)) return { sessions: out, next: null, scanned };
      scanned++;
      before = e.id;
      const rec = recs[i];
      if (rec) out.push({ ...rec });
      if (out.length >= limit) break;
    }
    if (entries.length < chunk && before === entries.at(-1)?.id) {
      return { sessions: out, next: null, scanned };
    }
  }
  return { sessions: out, next: before ?? null, scanned };
}

/**
 * How much older than an event its sessions may be stamped (another instance's clock behind
 * this one's): an event id search reads the index down to the event's time less this.
 */
const EVENT_SLACK_MS = 5 * 60_000;

/**
 * The lowest id the scan reads: the range's start, and for an event id the event's time (its
 * sessions, the first and its re-runs, are made after it).
 */
function lowerBound(q: SessionQuery, search: string): string | undefined {
  const times: number[] = [];
  if (q.since !== undefined) times.push(q.since);
  const evt = /^evt_[0-9a-z]{26}$/.test(search) ? idTime(search) : null;
  if (evt !== null) times.push(evt - EVENT_SLACK_MS);
  return times.length ? idAt("ses", Math.max(...times)) : undefined;
}

/**
 * Whether a session's record answers a search: an event id's sessions, or text found,
 * case-insensitive, in the error (message and traceback) or, read then, the prints.
 */
function searchTest(
  search: string,
  log: ((id: string) => Promise<SessionLogEntry[]>) | undefined,
): (rec: SessionRecord) => Promise<boolean> {
  const text = search && !/^evt_[0-9a-z]{26}$/.test(search) ? search.toLowerCase() : "";
  return async (rec) => {
    if (!search) return true;
    if (!text) return rec.event_id === search;
    const error = rec.error ? `${rec.error.message}\n${rec.error.traceback ?? ""}` : "";
    if (error.toLowerCase().includes(text)) return true;
    const entries = log ? await log(rec.id) : [];
    return entries.some((e) => e.kind === "print" && e.text.toLowerCase().includes(text));
  };
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

/** Whether a session id was made within the query's time range. */
function inRange(q: Pick<SessionQuery, "since" | "until">, id: string): boolean {
  const t = idTime(id) ?? 0;
  return (q.since === undefined || t >= q.since) && (q.until === undefined || t < q.until);
}
