import type { Storage } from "unstorage";
import type { JournalStep, SessionRecord, SessionState } from "../model/records.ts";
import { atomicBatch, type StorageOp } from "./drivers/batch.ts";
import { oncePerSession, rangedPage } from "./index-range.ts";
import type {
  IndexEntry,
  ListOptions,
  SessionChange,
  SessionIndex,
  SessionStore,
} from "./record-types.ts";

/** Every state a session can be in: an index entry is under exactly one of them. */
/** Every session state, as the index keys spell them. */
export const STATES: SessionState[] = ["created", "running", "completed", "error", "stopped"];
const ENDED = new Set<SessionState>(["completed", "error", "stopped"]);

// Keys. The index is `session-index:<project_id>:<state>:<session_id>`, so listing a project's
// sessions in one state is one range of keys (one ordered scan on lmdb, one folder on fs) and
// session ids, which sort by time, give the order. An index entry is written in the same
// atomic batch as the record it points to, and moved when the state changes.
const recordKey = (id: string) => `sessions:${id}`;
const logKey = (id: string) => `logs:${id}`;
/** A journal step's key: steps sort by number. */
export const stepKey = (id: string, seq: number) =>
  `journals:${id}:${String(seq).padStart(8, "0")}`;
/**
 * Part `i` of step `seq`'s value kept apart: beside its step, in the journal's key range (so the
 * session's deletion, retention and backups take it; on Redis a field of the journal's hash).
 */
export const partKey = (id: string, seq: number, i: number) =>
  `${stepKey(id, seq)}-part-${String(i).padStart(4, "0")}`;
/** Whether a key under `journals:<id>` is a part of a value apart, not a step. */
export const isPartKey = (key: string) => key.includes("-part-");

/**
 * The writes of one journal step: its value's parts first, each the (sealed) text as it is (no
 * JSON around it: no copy of the whole made to write it or to read it), then the step without
 * them; on fs-lite, a step is never stored before its parts.
 */
export function stepOps(id: string, step: JournalStep): StorageOp[] {
  if (step.kind !== "activity" || !step.parts) return [{ key: stepKey(id, step.seq), value: step }];
  const { parts, ...kept } = step;
  const ops: StorageOp[] = parts.map((part, i) => ({
    key: partKey(id, step.seq, i),
    value: part,
  }));
  ops.push({ key: stepKey(id, step.seq), value: kept });
  return ops;
}

const indexKey = (projectId: string, state: SessionState, id: string) =>
  `session-index:${projectId}:${state}:${id}`;
/** The layout before the state was part of the key: `<project_id>:<session_id>` = state. */
const legacyIndexKey = (projectId: string, id: string) => `session-index:${projectId}:${id}`;

/** Index keys (relative to `session-index:`) as entries; a legacy key has no state part. */
function parseIndexKey(key: string): IndexEntry | null {
  const parts = key.split(":");
  if (parts.length !== 3) return null;
  const [project_id, state, id] = parts as [string, SessionState, string];
  return STATES.includes(state) ? { project_id, state, id } : null;
}

const newestFirst = (a: IndexEntry, b: IndexEntry) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * The writes of a change of one session: the event that starts it (with its first record),
 * journal steps, then the log, then the record and its index entry (whoever finds a record
 * finds its event, and an ended record's log whole, even on fs-lite, where a batch is written
 * in order rather than at once).
 */
function changeOps(id: string, change: SessionChange): StorageOp[] {
  const ops: StorageOp[] = [];
  const texts = change.texts;
  if (change.event) {
    ops.push({ key: `events:${change.event.id}`, value: texts?.event ?? change.event });
  }
  for (const step of change.steps ?? []) ops.push(...stepOps(id, step));
  if (change.log) ops.push({ key: logKey(id), value: change.log });
  const rec = change.record;
  if (!rec) return ops;
  ops.push({ key: recordKey(rec.id), value: texts?.record ?? rec });
  if (change.was === rec.state) return ops; // its entry is in place: no write
  if (change.was === undefined) {
    // Not known what is stored: clear every other place the entry could be.
    ops.push({ key: legacyIndexKey(rec.project_id, rec.id), value: null });
    for (const s of STATES) {
      if (s !== rec.state) ops.push({ key: indexKey(rec.project_id, s, rec.id), value: null });
    }
  } else if (change.was !== null) {
    ops.push({ key: indexKey(rec.project_id, change.was, rec.id), value: null });
  }
  ops.push({ key: indexKey(rec.project_id, rec.state, rec.id), value: 1 });
  return ops;
}

/**
 * The session records and their index over one `Storage`, see `SessionStore`.
 * @example const { sessions, sessionIndex } = createSessionStore(storage);
 */
export function createSessionStore(storage: Storage): {
  sessions: SessionStore;
  sessionIndex: SessionIndex;
} {
  const sessionIndex = createSessionIndex(storage);
  const sessions: SessionStore = {
    get: (id) => storage.getItem<SessionRecord>(recordKey(id)),
    async delete(id, projectId, state) {
      const steps = await storage.getKeys(`journals:${id}`);
      const ops: StorageOp[] = steps.map((key) => ({ key, value: null }));
      ops.push({ key: logKey(id), value: null }, { key: recordKey(id), value: null });
      for (const s of state ? [state] : STATES) {
        ops.push({ key: indexKey(projectId, s, id), value: null });
      }
      if (!state) ops.push({ key: legacyIndexKey(projectId, id), value: null });
      await atomicBatch(storage, ops);
    },
    put: (rec, was) => sessions.commit(rec.id, { record: rec, was }),
    async commit(id, change) {
      const ops = changeOps(id, change);
      if (ops.length > 0 || change.own) await atomicBatch(storage, ops, change.own);
    },
    async commitMany(changes) {
      const ops = changes.flatMap(({ id, change }) => changeOps(id, change));
      if (ops.length > 0) await atomicBatch(storage, ops);
    },
    async list(opts: ListOptions = {}) {
      const limit = opts.limit ?? 100;
      // The index keys only (no record is read to choose), across projects when none is given.
      const chosen = await sessionIndex.page({
        projectId: opts.project_id,
        state: opts.state,
        limit,
      });
      const recs = await Promise.all(chosen.map((e) => sessions.get(e.id)));
      return recs.filter(
        (r): r is SessionRecord => r !== null && (!opts.state || r.state === opts.state),
      );
    },
  };
  return { sessions, sessionIndex };
}

/** The index keys under `base` (`<project>[:<state>]`, or "" for all), without their prefix. */
async function indexKeys(storage: Storage, base: string): Promise<string[]> {
  const prefix = base ? `session-index:${base}` : "session-index";
  const keys = await storage.getKeys(prefix);
  return keys.map((k) => k.slice("session-index:".length));
}

/** Every project's entries (in a state), newest first: the index keys only, no record. */
async function acrossProjects(storage: Storage, state?: SessionState): Promise<IndexEntry[]> {
  const entries = (await indexKeys(storage, ""))
    .map(parseIndexKey)
    .filter((e): e is IndexEntry => e !== null && (!state || e.state === state))
    .sort(newestFirst);
  return oncePerSession(entries);
}

/** The index of sessions by project and state, read from its keys alone. */
function createSessionIndex(storage: Storage): SessionIndex {
  const ranged = rangedPage(storage);
  const sessionIndex: SessionIndex = {
    async entries(projectId, state) {
      const keys = await indexKeys(storage, state ? `${projectId}:${state}` : projectId);
      const out: IndexEntry[] = [];
      for (const k of keys) {
        const e = parseIndexKey(k);
        if (e) out.push(e);
      }
      return oncePerSession(out.sort(newestFirst));
    },
    async count(projectId, state) {
      if (projectId) {
        return (await indexKeys(storage, state ? `${projectId}:${state}` : projectId)).length;
      }
      const keys = await indexKeys(storage, "");
      if (!state) return keys.length;
      return keys.filter((k) => parseIndexKey(k)?.state === state).length;
    },
    async page(opts) {
      if (ranged) return ranged(opts);
      const { projectId, state, before, since, limit } = opts;
      const all = projectId
        ? await sessionIndex.entries(projectId, state)
        : await acrossProjects(storage, state);
      const inRange = all.filter(
        (e) => (before === undefined || e.id < before) && (since === undefined || e.id >= since),
      );
      return inRange.slice(0, limit);
    },
  };
  return sessionIndex;
}

/** Whether a state is final: retention deletes only sessions in one. */
export const isEnded = (state: SessionState) => ENDED.has(state);
