/** Latency summaries from sorted samples: nearest-rank percentiles, no interpolation. */

export interface Summary {
  count: number;
  /** All in milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The nearest-rank percentile of an ascending array.
 * @example percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Summarizes samples given in milliseconds (any order).
 * @example summarize([3, 1, 2]).p50 // 2
 */
export function summarize(samples: number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const s of sorted) sum += s;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** The median of a few values (the middle one, the lower of two). */
export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}
