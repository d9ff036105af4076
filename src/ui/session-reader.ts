/**
 * Reading sessions for the UI: a session's record and log wherever it is (running here, just
 * ended here, or stored), one page of the list, and one session followed to its end.
 */
import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import type { ActivityInFlight } from "../model/run-records.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";
import { scanSessions } from "../storage/session-scan.ts";
import {
  ENDED_STATES,
  type SessionPage,
  type SessionQuery,
  type WatchedSessionChange,
} from "./data.ts";

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
 * One page of the list (`scanSessions`: the filter the API's list uses too), at most 200 rows;
 * a trigger filter reads at most SCAN_BUDGET records for it.
 */
export function listSessions(
  stores: Stores,
  reader: SessionReader,
  q: SessionQuery,
): Promise<SessionPage> {
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  return scanSessions(stores.sessionIndex, (id) => reader.record(id), q, {
    limit,
    budget: SCAN_BUDGET,
    log: async (id) => (await reader.held(id))?.entries ?? [],
  });
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
  onChange: (c: WatchedSessionChange) => void,
): () => void {
  let closed = false;
  let unlisten = () => {};
  void (async () => {
    const live = sessions.live(id);
    if (live) {
      const { log, record } = live;
      for (const entry of log.entries.slice(from)) onChange({ kind: "entry", entry, record });
      // Activities in flight, told as they start; an entry says which of them it ended.
      const told = new Set<number>();
      const started = (activity: ActivityInFlight) => {
        told.add(activity.id);
        if (!closed) onChange({ kind: "started", activity, record });
      };
      for (const a of log.inFlight.values()) started(a);
      const offStarts = log.listenStarts(started);
      const off = log.listen((entry) => {
        const ended = [...told].filter((n) => !log.inFlight.has(n));
        for (const n of ended) told.delete(n);
        if (!closed) onChange({ kind: "entry", entry, record, ...(ended.length > 0 && { ended }) });
      });
      const offEnd = sessions.onEnd(id, (final) => {
        off();
        offStarts();
        if (!closed) onChange({ kind: "end", record: final });
      });
      unlisten = () => {
        off();
        offStarts();
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
