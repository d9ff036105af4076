/**
 * Session counters per minute and per hour, kept as sessions are created and end, in storage,
 * so the overview page reads a few dozen small documents whatever the store holds (1,000,000
 * sessions or ten), and every instance of a fleet sees every other's counts.
 *
 * Each instance counts in memory and writes its own documents (`stats:m:<minute>:<instance>`,
 * `stats:h:<hour>:<instance>`): one writer per key, so there is no read-modify-write race and
 * no atomic increment is needed from the driver. It writes them at most `flushMs` after a change
 * and when it stops; a crash loses at most that much counting. Its live gauges (running, parked)
 * go to `stats:live:<instance>`; readers add the fresh ones. Old documents are removed by
 * whichever instance flushes (minutes after a day, hours after eight).
 */
import { randomBytes } from "node:crypto";
import type { Storage, StorageValue } from "unstorage";
import { type Clock, systemClock } from "../clock.ts";
import type { SessionRecord } from "../model/records.ts";
import { atomicBatch } from "../storage/drivers/batch.ts";
import {
  type BucketDoc,
  type EndState,
  emptyCounts,
  histIndex,
  MAX_ERRORS,
  type SessionMark,
  type TriggerCounts,
} from "./buckets.ts";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
const KEEP = { m: 24 * HOUR, h: 8 * 24 * HOUR } as const;
const PRUNE_EVERY = 10 * MINUTE;
/** Live gauges older than this are an instance that stopped. */
export const LIVE_FRESH_MS = 30_000;

export type Unit = "m" | "h";
export const unitMs = (u: Unit) => (u === "m" ? MINUTE : HOUR);

/** `stats:<unit>:<start, 13 digits>:<instance>`: sorted by time within a unit. */
export const bucketKey = (u: Unit, start: number, instance: string) =>
  `stats:${u}:${String(start).padStart(13, "0")}:${instance}`;

/** The start of a bucket key, or null for a key of another shape. */
export function bucketStart(key: string): number | null {
  const m = /^stats:[mh]:(\d{13}):/.exec(key);
  return m ? Number(m[1]) : null;
}

export interface LiveGauges {
  running: number;
  parked: number;
  /** Epoch ms of the write. */
  at: number;
}

export interface SessionStatsOptions {
  clock?: Clock;
  /** How long a change waits before it is written (ms). */
  flushMs?: number;
  /** This instance's live sessions and parked ones, now. */
  gauges?: () => { running: number; parked: number };
  /** The id in this counter's keys (a random one unless given: the backfill's is its own). */
  instance?: string;
}

/**
 * When a counter begins (sessions created here from then on are its own) and the id in its
 * keys: the given one, else its start and random hex.
 */
const counterId = (since: number, given?: string) => ({
  since,
  instance: given ?? `${since.toString(36)}${randomBytes(4).toString("hex")}`,
});

/** The first line of an error, short enough for a table cell. */
const firstLine = (rec: SessionRecord) =>
  (rec.error?.message ?? "").split("\n", 1)[0]!.slice(0, 200);

/**
 * Counts sessions as they are created and end; see the module's comment.
 * @example const stats = createSessionStats(storage); sessions.onStarted(stats.started);
 */
export function createSessionStats(storage: Storage, opts: SessionStatsOptions = {}) {
  const clock = opts.clock ?? systemClock;
  const flushMs = opts.flushMs ?? 1000;
  const { since, instance } = counterId(clock.now(), opts.instance);
  const dirty = new Map<string, BucketDoc>();
  /** This instance's documents still kept: later changes add to them (their keys are its own). */
  const docs = new Map<string, BucketDoc>();
  let timer: unknown = null;
  let lastPrune = 0;
  let writing: Promise<void> = Promise.resolve();
  let lastLive = "";

  const count = (rec: SessionRecord, at: number, add: (c: TriggerCounts, d: BucketDoc) => void) => {
    for (const u of ["m", "h"] as const) {
      if (at < clock.now() - KEEP[u]) continue; // past what the overview shows
      const [key, d] = bucketOf(docs, bucketKey(u, at - (at % unitMs(u)), instance));
      const tk = `${rec.project_id}/${rec.trigger_name}`;
      d.triggers[tk] ??= emptyCounts(rec.project_id, rec.project_name, rec.trigger_name);
      add(d.triggers[tk], d);
      dirty.set(key, d);
    }
    if (timer === null) timer = clock.setTimeout(() => void flush(), flushMs);
  };

  const flush = async (): Promise<void> => {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
    const batch = takeBatch(dirty);
    for (const [key, d] of docs) {
      if (d.start < clock.now() - KEEP[key.startsWith("stats:m") ? "m" : "h"]) docs.delete(key);
    }
    const live = opts.gauges?.();
    const liveText = live ? `${live.running}/${live.parked}` : "";
    const now = clock.now();
    if (live && (liveText !== lastLive || batch.length > 0)) {
      lastLive = liveText;
      batch.push({ key: `stats:live:${instance}`, value: { ...live, at: now } });
    }
    writing = writing
      .then(async () => {
        if (batch.length > 0) await atomicBatch(storage, batch);
        if (now - lastPrune >= PRUNE_EVERY) {
          lastPrune = now;
          await prune(storage, now);
        }
      })
      .catch(() => keepDirty(batch, docs, dirty));
    await writing;
  };

  return {
    instance,
    since,
    /** A session was created (stored) here. */
    started(rec: SessionRecord): void {
      count(rec, Date.parse(rec.created_at) || clock.now(), (c) => {
        c.created++;
      });
    },
    /** A session ended here, in its final record. */
    ended(rec: SessionRecord): void {
      if (rec.state !== "completed" && rec.state !== "error" && rec.state !== "stopped") return;
      const at = Date.parse(rec.ended_at ?? "") || clock.now();
      count(rec, at, endCounter(rec, rec.state, at));
    },
    /** Writes what is counted and not yet stored (the overview calls it before reading). */
    flush,
    /** This instance's gauges now, as a reader would see them stored. */
    live: (): LiveGauges | null => (opts.gauges ? { ...opts.gauges(), at: clock.now() } : null),
    async dispose(): Promise<void> {
      await flush();
    },
  };
}

export type SessionStats = ReturnType<typeof createSessionStats>;

/** The document under `key`, made empty the first time. */
function bucketOf(docs: Map<string, BucketDoc>, key: string): [string, BucketDoc] {
  let d = docs.get(key);
  if (!d) {
    const start = Number(/^stats:[mh]:(\d{13}):/.exec(key)![1]);
    d = { v: 1, start, triggers: {}, errors: [] };
    docs.set(key, d);
  }
  return [key, d];
}

/** Storage refused a batch (down, full): its documents stay dirty, written with the next change. */
function keepDirty(
  batch: { key: string }[],
  docs: Map<string, BucketDoc>,
  dirty: Map<string, BucketDoc>,
): void {
  for (const { key } of batch) {
    const d = docs.get(key);
    if (d && !dirty.has(key)) dirty.set(key, d);
  }
}

/** The changed documents as one write (copies: counting goes on while it is written). */
function takeBatch(dirty: Map<string, BucketDoc>): { key: string; value: StorageValue }[] {
  const batch = [...dirty.entries()].map(([key, d]) => ({
    key,
    value: structuredClone(d) as unknown as StorageValue,
  }));
  dirty.clear();
  return batch;
}

/** What a session's end adds to its trigger's counts and its bucket's latest errors. */
function endCounter(rec: SessionRecord, state: EndState, at: number) {
  const begun = Date.parse(rec.started_at ?? rec.created_at);
  const mark: SessionMark = { id: rec.id, at, state };
  if (state === "error") mark.message = firstLine(rec);
  return (c: TriggerCounts, d: BucketDoc) => {
    c[state]++;
    if (Number.isFinite(begun)) {
      const i = histIndex(Math.max(0, at - begun));
      c.hist[i] = (c.hist[i] ?? 0) + 1;
    }
    if (!c.last || c.last.at <= at) c.last = mark;
    if (state !== "error") return;
    c.last_error = mark;
    const err = { ...mark, project_name: rec.project_name, trigger: rec.trigger_name };
    d.errors = [err, ...d.errors].slice(0, MAX_ERRORS);
  };
}

/** Removes bucket documents past their keeping and live gauges of stopped instances. */
async function prune(storage: Storage, now: number): Promise<void> {
  const old: string[] = [];
  for (const u of ["m", "h"] as const) {
    for (const key of await storage.getKeys(`stats:${u}`)) {
      const start = bucketStart(key);
      if (start !== null && start < now - KEEP[u]) old.push(key);
    }
  }
  for (const key of await storage.getKeys("stats:live")) {
    const g = await storage.getItem<LiveGauges>(key);
    if (!g || g.at < now - KEEP.m) old.push(key);
  }
  await Promise.all(old.map((k) => storage.removeItem(k)));
}
