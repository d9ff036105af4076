/**
 * Reading sessions for the UI: a session's record and log wherever it is (running here, just
 * ended here, or stored), one page of the list, and one session followed to its end.
 */
import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";
import { ENDED_STATES, type SessionChange, type SessionPage, type SessionQuery } from "./data.ts";

/** Index entries one page of the list may look at (a trigger filter skips other triggers'). */
const SCAN_BUDGET = 1000;
/**
 * Sessions that ended here are kept in memory briefly: their stored record and log trail the
 * end by a write or two. Few and short, as each holds a whole log.
 */
const RECENT_MAX = 100;
const RECENT_MS = 5_000;

export type Held = { record: SessionRecord; entries: SessionLogEntry[] };

export interface SessionReader {
  /** Keeps a session that just ended here, until storage has caught up with it. */
  remember(held: Held): void;
  /** A session's record and log: running here, just ended here, or from storage. */
  held(id: string): Promise<Held | null>;
  record(id: string): Promise<SessionRecord | null>;
  /** Whether the session ended here a moment ago (its end is already known). */
  endedHere(id: string): boolean;
}

/** @example const reader = createSessionReader(stores, sessions); await reader.held(id) */
export function createSessionReader(stores: Stores, sessions: SessionManager): SessionReader {
  const recent = new Map<string, Held & { at: number }>();
  const fresh = (id: string) => {
    const r = recent.get(id);
    return r && Date.now() - r.at < RECENT_MS ? r : null;
  };
  return {
    remember(held) {
      const at = Date.now();
      for (const [id, r] of recent) {
        if (recent.size < RECENT_MAX && at - r.at < RECENT_MS) break;
        recent.delete(id);
      }
      recent.set(held.record.id, { ...held, at });
    },
    async held(id) {
      const live = sessions.live(id);
      if (live) return { record: live.record, entries: live.log.entries };
      const r = fresh(id);
      if (r) return r;
      const record = await stores.sessions.get(id);
      return record ? { record, entries: await stores.logs.get(id) } : null;
    },
    async record(id) {
      return sessions.live(id)?.record ?? fresh(id)?.record ?? stores.sessions.get(id);
    },
    endedHere: (id) => recent.has(id),
  };
}

/**
 * One page of the list from the stores' session index (the one index of sessions: a project's
 * entries are one key range, one hash on Redis), newest first; the cursor is the id of the
 * last session looked at. A trigger filter reads records until the page is full, at most
 * SCAN_BUDGET of them.
 */
export async function listSessions(
  stores: Stores,
  reader: SessionReader,
  q: SessionQuery,
): Promise<SessionPage> {
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  let before = q.cursor;
  const out: SessionRecord[] = [];
  let scanned = 0;
  while (out.length < limit && scanned < SCAN_BUDGET) {
    const chunk = Math.min(q.trigger ? 100 : limit - out.length, SCAN_BUDGET - scanned);
    const entries = await stores.sessionIndex.page({
      projectId: q.project,
      state: q.state,
      before,
      limit: chunk,
    });
    if (entries.length === 0) return { sessions: out, next: null, scanned };
    const recs = await Promise.all(entries.map((e) => reader.record(e.id)));
    for (const [i, e] of entries.entries()) {
      scanned++;
      before = e.id;
      const rec = recs[i];
      const shown = rec && (!q.state || rec.state === q.state);
      if (shown && (!q.trigger || rec.trigger_name === q.trigger)) out.push({ ...rec });
      if (out.length >= limit) break;
    }
    if (entries.length < chunk && before === entries.at(-1)?.id) {
      return { sessions: out, next: null, scanned };
    }
  }
  return { sessions: out, next: before ?? null, scanned };
}

/**
 * Follows one session from log entry `from` on. Running here: its entries, then new ones as
 * they come, then its end. Ended, or run by another instance: wait for its end there, then
 * what it logged. Returns unwatch.
 */
export function watchSession(
  sessions: SessionManager,
  reader: SessionReader,
  id: string,
  from: number,
  onChange: (c: SessionChange) => void,
): () => void {
  let closed = false;
  let unlisten = () => {};
  void (async () => {
    const live = sessions.live(id);
    if (live) {
      for (const entry of live.log.entries.slice(from)) {
        onChange({ kind: "entry", entry, record: live.record });
      }
      const off = live.log.listen((entry) => {
        if (!closed) onChange({ kind: "entry", entry, record: live.record });
      });
      const offEnd = sessions.onEnd(id, (final) => {
        off();
        if (!closed) onChange({ kind: "end", record: final });
      });
      unlisten = () => {
        off();
        offEnd();
      };
      return;
    }
    let h = await reader.held(id);
    if (h && !ENDED_STATES.has(h.record.state) && !reader.endedHere(id)) {
      await sessions.whenEnded(id);
      h = await reader.held(id);
    }
    if (!h || closed) return;
    for (const entry of h.entries.slice(from)) onChange({ kind: "entry", entry, record: h.record });
    onChange({ kind: "end", record: h.record });
  })();
  return () => {
    closed = true;
    unlisten();
  };
}
