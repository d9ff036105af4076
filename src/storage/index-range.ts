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
    const ranges = projects.flatMap((p) =>
      states.map((s) => {
        const base = `${PREFIX}${p}:${s}:`;
        const end = before ? base + before : `${PREFIX}${p}:${s};`;
        return { project_id: p, state: s, base, start: base + (since ?? ""), end };
      }),
    );
    return newestOf(walk, ranges, limit);
  };
}

/** One project's entries in one state, walked newest first a chunk at a time. */
interface Range {
  project_id: string;
  state: SessionState;
  base: string;
  start: string;
  /** Exclusive: the walk goes on below the last key read. */
  end: string;
  keys: string[];
  done: boolean;
  chunk: number;
}

/**
 * The newest `limit` entries of many ranges, each session once: every range's newest few are
 * read at once, then the ranges are merged newest first, a range read further (twice as much
 * each time) only when the merge has taken all it had. With many projects a page reads about
 * two entries per range rather than a page's worth of each.
 */
export async function newestOf(
  walk: Walk,
  given: Omit<Range, "keys" | "done" | "chunk">[],
  limit: number,
): Promise<IndexEntry[]> {
  const first = Math.min(limit, Math.max(2, Math.ceil((2 * limit) / given.length)));
  const ranges: Range[] = given.map((r) => ({ ...r, keys: [], done: false, chunk: first }));
  const fill = async (r: Range) => {
    r.keys = await walk({ start: r.start, end: r.end, reverse: true, limit: r.chunk });
    r.done = r.keys.length < r.chunk;
    if (r.keys.length > 0) r.end = r.keys.at(-1)!;
    r.chunk = Math.min(limit, r.chunk * 2);
  };
  await Promise.all(ranges.map(fill));
  const out: IndexEntry[] = [];
  while (out.length < limit) {
    let next: Range | null = null;
    let newest = "";
    for (const r of ranges) {
      const id = r.keys[0]?.slice(r.base.length);
      if (id !== undefined && (!next || id > newest)) [next, newest] = [r, id];
    }
    if (!next) break;
    const id = next.keys.shift()!.slice(next.base.length);
    // A session met under two states (its entry moving between the reads) is listed once.
    if (out.at(-1)?.id !== id) out.push({ project_id: next.project_id, state: next.state, id });
    if (next.keys.length === 0 && !next.done) await fill(next);
  }
  return out;
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
