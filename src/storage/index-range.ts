/**
 * A page of the session index read as key ranges bounded by ids, on a driver that walks its
 * keys in order (`DriverCapabilities.keyRange`: LMDB, memory, PostgreSQL). Session ids sort by
 * time, so "older than the cursor, not older than the range's start" is one range per project
 * and state, walked newest-first and stopped at the page's size: a page costs the same with a
 * thousand sessions stored or a million.
 */
import type { Storage } from "unstorage";
import type { SessionState } from "../model/records.ts";
import { capabilitiesOf, type KeyRange } from "./drivers/capabilities.ts";
import type { IndexEntry, IndexPageOptions } from "./record-types.ts";

const PREFIX = "session-index:";
const STATES: SessionState[] = ["created", "running", "completed", "error", "stopped"];

type Walk = (range: KeyRange) => Promise<string[]>;

/**
 * The page reader over `storage`'s driver, or null when it cannot walk a key range (fs-lite,
 * Redis, where the index is a hash per project): the caller lists the keys then.
 * @example await rangedPage(storage)?.({ projectId: "prj_…", limit: 50 })
 */
export function rangedPage(
  storage: Storage,
): ((opts: IndexPageOptions) => Promise<IndexEntry[]>) | null {
  const walk = capabilitiesOf(storage).keyRange;
  if (!walk) return null;
  return async ({ projectId, state, before, since, limit }) => {
    if (limit <= 0) return [];
    const projects = projectId ? [projectId] : await indexProjects(walk);
    const states = state ? [state] : STATES;
    const lists = await Promise.all(
      projects.flatMap((p) =>
        states.map(async (s) => {
          const base = `${PREFIX}${p}:${s}:`;
          const end = before ? base + before : `${PREFIX}${p}:${s};`;
          const keys = await walk({ start: base + (since ?? ""), end, reverse: true, limit });
          return keys.map((k) => ({ project_id: p, state: s, id: k.slice(base.length) }));
        }),
      ),
    );
    const all = lists.flat();
    if (lists.length > 1) all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return oncePerSession(all).slice(0, limit);
  };
}

/**
 * Entries sorted by id with each session once: the ranges of its old and new state, read one
 * after the other while it moves between them, may both hold it (the first is kept; the caller
 * reads its record for its state).
 */
export function oncePerSession(sorted: IndexEntry[]): IndexEntry[] {
  return sorted.filter((e, i) => i === 0 || sorted[i - 1]!.id !== e.id);
}

/**
 * The projects that have index entries: one step of a key walk per project (from the first
 * key, then past that project's last), not a listing of their entries.
 */
async function indexProjects(walk: Walk): Promise<string[]> {
  const out: string[] = [];
  let start = PREFIX;
  for (;;) {
    const [key] = await walk({ start, end: "session-index;", limit: 1 });
    if (!key) return out;
    const project = key.slice(PREFIX.length).split(":")[0] ?? "";
    out.push(project);
    start = `${PREFIX}${project};`;
  }
}
