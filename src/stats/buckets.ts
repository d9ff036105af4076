/**
 * The shape of the session counters kept per minute and per hour (src/stats/session-stats.ts),
 * and how two of them add up. A bucket document is written by one instance only (its id is in
 * the key), so no two writers race on it; readers add the documents of every instance.
 */
import type { SessionState } from "../model/records.ts";

/** Upper bounds (ms) of the duration histogram; the last bucket is everything above. */
export const DURATION_BOUNDS = [
  5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000, 900_000,
  3_600_000,
] as const;

export type EndState = Extract<SessionState, "completed" | "error" | "stopped">;
export const END_STATES: readonly EndState[] = ["completed", "error", "stopped"];

/** A session as the counters remember it (the latest run, the latest error). */
export interface SessionMark {
  id: string;
  /** Epoch ms. */
  at: number;
  state: SessionState;
  /** The error's first line, cut at 200 characters; errors only. */
  message?: string;
}

/** One trigger's counts in one bucket. `hist[i]`: ended sessions that took ≤ bound i. */
export interface TriggerCounts {
  project_id: string;
  project_name: string;
  /** "" for sessions started by hand. */
  trigger: string;
  created: number;
  completed: number;
  error: number;
  stopped: number;
  hist: number[];
  last?: SessionMark;
  last_error?: SessionMark;
}

/** One instance's counters for one minute or one hour. */
export interface BucketDoc {
  v: 1;
  /** The bucket's start, epoch ms. */
  start: number;
  /** By `<project_id>/<trigger>`. */
  triggers: Record<string, TriggerCounts>;
  /** The bucket's latest errors, newest first, at most `MAX_ERRORS`. */
  errors: (SessionMark & { project_name: string; trigger: string })[];
}

export const MAX_ERRORS = 10;

export const emptyCounts = (
  project_id: string,
  project_name: string,
  trigger: string,
): TriggerCounts => ({
  project_id,
  project_name,
  trigger,
  created: 0,
  completed: 0,
  error: 0,
  stopped: 0,
  hist: DURATION_BOUNDS.map(() => 0).concat(0),
});

const later = (a: SessionMark | undefined, b: SessionMark | undefined) =>
  !a ? b : !b ? a : b.at > a.at ? b : a;

/**
 * Adds `b` into `a` (counts, histogram; the later of the marks).
 * @example addCounts(total, bucket.triggers[key])
 */
export function addCounts(a: TriggerCounts, b: TriggerCounts): TriggerCounts {
  a.created += b.created;
  a.completed += b.completed;
  a.error += b.error;
  a.stopped += b.stopped;
  for (const [i, n] of b.hist.entries()) a.hist[i] = (a.hist[i] ?? 0) + n;
  const last = later(a.last, b.last);
  const lastError = later(a.last_error, b.last_error);
  if (last) a.last = last;
  if (lastError) a.last_error = lastError;
  return a;
}

/** The histogram bucket of a duration. */
export const histIndex = (ms: number) => {
  const i = DURATION_BOUNDS.findIndex((b) => ms <= b);
  return i === -1 ? DURATION_BOUNDS.length : i;
};

/**
 * The `q`-quantile (0..1) of a duration histogram, as the upper bound of the bucket it falls
 * in (the last bucket: its lower bound); null when it holds nothing.
 * @example quantile([0, 3, 1, …], 0.5) // 10
 */
export function quantile(hist: number[], q: number): number | null {
  const total = hist.reduce((s, n) => s + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [i, n] of hist.entries()) {
    seen += n;
    if (seen >= rank) return DURATION_BOUNDS[i] ?? DURATION_BOUNDS[DURATION_BOUNDS.length - 1]!;
  }
  return null;
}
