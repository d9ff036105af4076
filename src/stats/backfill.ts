/**
 * Counting, once, the sessions stored before the counters existed (a data home upgraded from a
 * release without them): the overview of an upgraded store is then right from its first start.
 *
 * Marked by `stats:backfill` ({ before, done }): sessions created before `before` (the start
 * of the counters: the oldest hour document another counter left, else this counter's start)
 * are counted from their records, sessions after it by the counters as they happen. The
 * backfill writes its documents under an instance of its own (`backfill`), so one cut short (a
 * stop, a crash) is undone and done again at the next start; `done` is written after its last
 * document. It reads the session index newest first, within the counters' keeping (eight days)
 * and at most BACKFILL_MAX sessions, a page at a time in the background, and logs what it did.
 */
import type { Storage } from "unstorage";
import { idAt } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { SessionRecord } from "../model/records.ts";
import { capabilitiesOf } from "../storage/drivers/capabilities.ts";
import type { SessionIndex } from "../storage/record-types.ts";
import { bucketStart, createSessionStats, HOUR } from "./session-stats.ts";

export const BACKFILL_KEY = "stats:backfill";
const INSTANCE = "backfill";
/** Sessions one backfill reads at most (the newest of the counters' eight days). */
export const BACKFILL_MAX = 200_000;
const KEEP = 8 * 24 * HOUR;
const ENDED = new Set(["completed", "error", "stopped"]);

interface Marker {
  /** Sessions created before this (epoch ms) are the backfill's to count. */
  before: number;
  done: boolean;
  counted?: number;
}

/** What a backfill reads and writes: the stores' storage, session index and records. */
export interface BackfillStores {
  storage: Storage;
  sessionIndex: SessionIndex;
  sessions: { get(id: string): Promise<SessionRecord | null> };
}

interface BackfillDeps extends BackfillStores {
  /** The live counter: its own documents are not a sign of older counters. */
  live: { instance: string; since: number };
  log: Logger;
}

/**
 * The backfill of `stores`, started by the host once the service runs (`start`) and stopped
 * before storage closes (`stop`, which waits for the page under way).
 * @example const b = statsBackfill(stores, liveStats, log); b.start(); … await b.stop();
 */
export function statsBackfill(stores: BackfillStores, live: BackfillDeps["live"], log: Logger) {
  const deps: BackfillDeps = { ...stores, live, log };
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  return {
    start(): Promise<void> {
      running = backfill(deps, () => stopped).catch((e: unknown) => {
        if (!stopped) deps.log.warn(`stats backfill failed: ${(e as Error).message ?? e}`);
      });
      return running;
    },
    async stop(): Promise<void> {
      stopped = true;
      await running;
    },
  };
}

async function backfill(deps: BackfillDeps, stopped: () => boolean): Promise<void> {
  const { storage, log } = deps;
  const marker = await claim(deps);
  if (!marker) return;
  const t0 = Date.now();
  const from = Math.max(0, t0 - KEEP);
  const stats = createSessionStats(storage, { instance: INSTANCE, flushMs: 3_600_000 });
  // Ranged engines read a page at a time; the others list the index whole for each page asked.
  const pageSize = capabilitiesOf(storage).keyRange ? 500 : BACKFILL_MAX;
  let cursor = idAt("ses", marker.before);
  const when = new Date(marker.before).toISOString();
  let counted = 0;
  while (counted < BACKFILL_MAX && !stopped()) {
    const limit = Math.min(pageSize, BACKFILL_MAX - counted);
    const page = await deps.sessionIndex.page({ before: cursor, since: idAt("ses", from), limit });
    if (page.length === 0) break;
    if (counted === 0)
      log.info(
        `stats: counting the sessions stored before ${when} (the counters began then), in the background`,
      );
    for (const rec of await Promise.all(page.map((e) => deps.sessions.get(e.id)))) {
      if (rec) countOne(stats, rec, marker.before);
    }
    counted += page.length;
    cursor = page.at(-1)!.id;
    await stats.flush();
    await new Promise((r) => setImmediate(r)); // the service's own work goes first
  }
  await stats.dispose();
  if (stopped()) return; // not done: undone and done again at the next start
  await storage.setItem(BACKFILL_KEY, { ...marker, done: true, counted });
  if (counted === 0) return;
  const capped =
    counted >= BACKFILL_MAX ? `; older ones (the limit is ${BACKFILL_MAX}) are not` : "";
  log.info(
    `stats: counted ${counted} sessions stored before the counters (created before ${when}) in ${((Date.now() - t0) / 1000).toFixed(1)} s${capped}`,
  );
}

/** A session's creation, and its end when it ended before the counters began. */
function countOne(
  stats: ReturnType<typeof createSessionStats>,
  rec: SessionRecord,
  before: number,
) {
  if (!(Date.parse(rec.created_at) < before)) return;
  stats.started(rec);
  if (ENDED.has(rec.state) && Date.parse(rec.ended_at ?? "") < before) stats.ended(rec);
}

/**
 * The backfill to do, or null: done already, or another instance claimed it. A backfill cut
 * short leaves its marker not done: its documents are removed and it is done again.
 */
async function claim(deps: BackfillDeps): Promise<Marker | null> {
  const { storage } = deps;
  const old = await storage.getItem<Marker>(BACKFILL_KEY);
  if (old?.done) return null;
  if (old) {
    const mine = (await storage.getKeys("stats")).filter((k) => k.endsWith(`:${INSTANCE}`));
    await Promise.all(mine.map((k) => storage.removeItem(k)));
    return old;
  }
  const marker: Marker = { before: await countersBegan(deps), done: false };
  const swap = capabilitiesOf(storage).swap;
  if (swap) return (await swap(BACKFILL_KEY, null, JSON.stringify(marker))) ? marker : null;
  await storage.setItem(BACKFILL_KEY, marker);
  return marker;
}

/**
 * When counting began: the oldest hour document of another counter (a release that counted
 * before this marker existed; to the hour), else the live counter's start.
 */
async function countersBegan(deps: BackfillDeps): Promise<number> {
  let began = deps.live.since;
  for (const key of await deps.storage.getKeys("stats:h")) {
    if (key.endsWith(`:${deps.live.instance}`) || key.endsWith(`:${INSTANCE}`)) continue;
    const start = bucketStart(key);
    if (start !== null && start < began) began = start;
  }
  return began;
}
