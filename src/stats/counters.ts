import type { Logger } from "../log.ts";
import { type BackfillStores, statsBackfill } from "./backfill.ts";
import { createSessionStats } from "./session-stats.ts";

/**
 * The overview's counters of this instance (src/stats/session-stats.ts), with its live and
 * parked sessions (those its session manager counts), and the backfill of sessions stored
 * before counters existed (the host starts it; it stops with the counters).
 * @example const { stats, backfill } = instanceCounters(stores, () => sessions, log);
 */
export function instanceCounters(
  stores: BackfillStores,
  sessions: () => { activeCount: number; parkedCount: number },
  log: Logger,
) {
  const gauges = () => {
    const { activeCount, parkedCount } = sessions();
    return { running: Math.max(0, activeCount - parkedCount), parked: parkedCount };
  };
  const stats = createSessionStats(stores.storage, { gauges });
  const backfill = statsBackfill(stores, stats, log);
  return { stats: { ...stats, dispose: () => backfill.stop().then(stats.dispose) }, backfill };
}
