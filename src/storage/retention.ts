import type { Logger } from "../log.ts";
import type { Stores } from "./stores.ts";

export interface RetentionLimits {
  /** Ended sessions kept per project (with their logs and journals); older ones are deleted. */
  sessionsPerProject: number;
  /** Events kept in all; older ones are deleted. */
  events: number;
}

/** How many arrivals between two looks at a store: a look lists keys, so not on every write. */
const CHECK_EVERY = 200;

/**
 * Keeps storage bounded: past the limits, the oldest ended sessions of a project and the oldest
 * events go. Runs off the hot path, one pass at a time, every CHECK_EVERY arrivals; ids sort by
 * time, so "oldest" is a key sort. Running sessions are never deleted.
 * @example const pruner = createPruner(stores, { sessionsPerProject: 10_000, events: 100_000 }, log);
 */
export function createPruner(stores: Stores, limits: RetentionLimits, log: Logger) {
  const endedSince = new Map<string, number>();
  let eventsSince = 0;
  let running: Promise<void> | null = null;

  const once = (work: () => Promise<void>) => {
    if (running) return;
    running = work()
      .catch((err) => log.error("pruning storage failed", err))
      .finally(() => {
        running = null;
      });
  };

  async function pruneSessions(projectId: string) {
    const keys = (await stores.sessionIndex.keys(projectId)).sort();
    const excess = keys.length - limits.sessionsPerProject;
    if (excess <= 0) return;
    let deleted = 0;
    for (const key of keys) {
      if (deleted >= excess) break;
      const id = key.split(":")[1]!;
      const record = await stores.sessions.get(id);
      if (record && (record.state === "running" || record.state === "created")) continue;
      await stores.sessions.delete(id, projectId);
      deleted++;
    }
    log.info(`pruned ${deleted} old sessions of ${projectId}`);
  }

  async function pruneEvents() {
    const keys = (await stores.events.keys()).sort();
    const excess = keys.length - limits.events;
    for (const key of keys.slice(0, Math.max(0, excess))) await stores.events.delete(key);
    if (excess > 0) log.info(`pruned ${excess} old events`);
  }

  return {
    sessionEnded(projectId: string) {
      const n = (endedSince.get(projectId) ?? 0) + 1;
      endedSince.set(projectId, n % CHECK_EVERY);
      if (n >= CHECK_EVERY) once(() => pruneSessions(projectId));
    },
    eventStored() {
      if (++eventsSince < CHECK_EVERY) return;
      eventsSince = 0;
      once(pruneEvents);
    },
    /** Waits for a pass under way (tests, shutdown). */
    async idle() {
      await running;
    },
    /** Runs both passes now (tests). */
    async pruneNow(projectId: string) {
      await running;
      await pruneSessions(projectId);
      await pruneEvents();
    },
  };
}

export type Pruner = ReturnType<typeof createPruner>;
