/**
 * The overview's figures over a range, read from the counters of src/stats/session-stats.ts:
 * the last hour is 60 minute documents per instance, a day 24 hour documents, a week 168, and
 * the live gauges one small document per instance. No session record is read.
 */
import type { Storage } from "unstorage";
import {
  addCounts,
  type BucketDoc,
  emptyCounts,
  MAX_ERRORS,
  quantile,
  type SessionMark,
  type TriggerCounts,
} from "./buckets.ts";
import {
  bucketStart,
  HOUR,
  LIVE_FRESH_MS,
  type LiveGauges,
  MINUTE,
  type SessionStats,
  type Unit,
  unitMs,
} from "./session-stats.ts";

export const RANGES = {
  hour: { unit: "m", bars: 60 },
  day: { unit: "h", bars: 24 },
  week: { unit: "h", bars: 168 },
} as const satisfies Record<string, { unit: Unit; bars: number }>;
export type Range = keyof typeof RANGES;
/** Each range's length. */
export const RANGE_MS: Record<Range, number> = {
  hour: HOUR,
  day: 24 * HOUR,
  week: 7 * 24 * HOUR,
};
export const isRange = (r: string | undefined): r is Range => !!r && r in RANGES;

/** Sessions created and ended in one bar of the chart. */
export interface Bar {
  start: number;
  created: number;
  completed: number;
  error: number;
  stopped: number;
}

/** A trigger's health over the range. */
export interface TriggerHealth {
  project_id: string;
  project_name: string;
  /** "" for sessions started by hand. */
  trigger: string;
  created: number;
  ended: number;
  completed: number;
  error: number;
  stopped: number;
  /** error / ended, null when none ended. */
  failure_rate: number | null;
  /** Upper bounds of the histogram bucket (ms), null when none ended. */
  p50: number | null;
  p95: number | null;
  last?: SessionMark;
  last_error?: SessionMark;
}

export interface Overview {
  range: Range;
  /** Epoch ms of the first bar's start and of now. */
  from: number;
  to: number;
  bar_ms: number;
  bars: Bar[];
  totals: Omit<Bar, "start">;
  triggers: TriggerHealth[];
  errors: (SessionMark & { project_name: string; trigger: string })[];
  /** Sessions running and parked now, over the fleet's instances that reported lately. */
  live: { running: number; parked: number; instances: number };
}

/**
 * The figures of one range, `now` being the end of its last bar.
 * @example await readOverview(storage, "day", Date.now(), stats)
 */
export async function readOverview(
  storage: Storage,
  range: Range,
  now: number,
  own?: SessionStats,
): Promise<Overview> {
  await own?.flush();
  const { unit, bars: n } = RANGES[range];
  const width = unitMs(unit);
  const lastStart = now - (now % width);
  const from = lastStart - (n - 1) * width;
  const bars: Bar[] = Array.from({ length: n }, (_, i) => ({
    start: from + i * width,
    created: 0,
    completed: 0,
    error: 0,
    stopped: 0,
  }));
  const keys = (await storage.getKeys(`stats:${unit}`)).filter((k) => {
    const s = bucketStart(k);
    return s !== null && s >= from && s <= lastStart;
  });
  const items = keys.length > 0 ? await storage.getItems(keys) : [];
  const per = new Map<string, TriggerCounts>();
  let errors: Overview["errors"] = [];
  for (const { value } of items) {
    const d = value as BucketDoc | null;
    if (!d) continue;
    const bar = bars[Math.floor((d.start - from) / width)];
    for (const [k, c] of Object.entries(d.triggers)) {
      if (bar) {
        bar.created += c.created;
        bar.completed += c.completed;
        bar.error += c.error;
        bar.stopped += c.stopped;
      }
      const sum = per.get(k) ?? emptyCounts(c.project_id, c.project_name, c.trigger);
      per.set(k, addCounts(sum, c));
    }
    errors.push(...d.errors);
  }
  errors = errors.sort((a, b) => b.at - a.at).slice(0, MAX_ERRORS);
  const totals = { created: 0, completed: 0, error: 0, stopped: 0 };
  for (const b of bars) {
    totals.created += b.created;
    totals.completed += b.completed;
    totals.error += b.error;
    totals.stopped += b.stopped;
  }
  const triggers = [...per.values()].map(health).sort(byName);
  return {
    range,
    from,
    to: now,
    bar_ms: width,
    bars,
    totals,
    triggers,
    errors,
    live: await live(storage, now, own),
  };
}

function health(c: TriggerCounts): TriggerHealth {
  const ended = c.completed + c.error + c.stopped;
  const { hist: _, ...rest } = c;
  return {
    ...rest,
    ended,
    failure_rate: ended > 0 ? c.error / ended : null,
    p50: quantile(c.hist, 0.5),
    p95: quantile(c.hist, 0.95),
  };
}

const byName = (a: TriggerHealth, b: TriggerHealth) =>
  a.project_name.localeCompare(b.project_name) || a.trigger.localeCompare(b.trigger);

/** The fleet's running and parked sessions: this instance's now, the others' last report. */
async function live(storage: Storage, now: number, own?: SessionStats) {
  const out = { running: 0, parked: 0, instances: 0 };
  const mine = own?.live();
  const keys = (await storage.getKeys("stats:live")).filter(
    (k) => !own || !k.endsWith(`:${own.instance}`),
  );
  const items = keys.length > 0 ? await storage.getItems(keys) : [];
  const fresh = items
    .map((i) => i.value as LiveGauges | null)
    .filter((g): g is LiveGauges => !!g && g.at >= now - LIVE_FRESH_MS);
  for (const g of mine ? [mine, ...fresh] : fresh) {
    out.running += g.running;
    out.parked += g.parked;
    out.instances++;
  }
  return out;
}

/** The bar width in words, for the chart's caption. */
export const barWords = (ms: number) =>
  ms === MINUTE ? "minute" : ms === HOUR ? "hour" : `${ms} ms`;
