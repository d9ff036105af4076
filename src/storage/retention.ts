import type { Logger } from "../log.ts";
import type { Stores } from "./records.ts";
import { isEnded } from "./session-records.ts";

export interface RetentionLimits {
  /** Ended sessions kept per project (with their logs and journals); older ones are deleted. */
  sessionsPerProject: number;
  /** Events kept in all; older ones are deleted. */
  events: number;
}

/** Told of every session end and stored event; prunes storage when the counts pass the limits. */
export interface Pruner {
  sessionEnded(projectId: string): void;
  eventStored(): void;
  /** Waits for a pass under way (shutdown). */
  idle(): Promise<void>;
}

/** Arrivals before the first look at a store (a look lists keys: never on every write). */
const FIRST_LOOK = 200;
/** A pass deletes down to this share of the limit, so the next is due only after many arrivals. */
const LOW_WATER = 0.9;

/**
 * Keeps storage bounded: past the limits, the oldest ended sessions of a project and the oldest
 * events go. A pass lists a store's keys, so passes are rare: the first after FIRST_LOOK
 * arrivals (to learn the count), later ones only when the counted arrivals pass the limit, and
 * each deletes down to LOW_WATER of it. Off the hot path, one pass at a time; ids sort by time,
 * so "oldest" is a key sort. Running sessions are never deleted.
 * @example const pruner = createPruner(stores, { sessionsPerProject: 10_000, events: 100_000 }, log);
 */
export function createPruner(stores: Stores, limits: RetentionLimits, log: Logger): Pruner {
  /** Per project: the sessions last counted (null: not yet) and the endings since. */
  const sessions = new Map<string, { counted: number | null; since: number }>();
  /** Events last counted (null: not yet) plus arrivals since; before the count, arrivals. */
  let events: number | null = null;
  let arrivals = 0;
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
    const left = await deleteOldSessions(stores, projectId, limits.sessionsPerProject, log);
    sessions.set(projectId, { counted: left, since: 0 });
  }

  async function pruneEvents() {
    events = await deleteOldEvents(stores, limits.events, log);
  }

  return {
    sessionEnded(projectId: string) {
      const state = sessions.get(projectId) ?? { counted: null, since: 0 };
      sessions.set(projectId, state);
      state.since++;
      const due =
        state.counted === null
          ? state.since >= FIRST_LOOK
          : state.counted + state.since > limits.sessionsPerProject;
      if (due) once(() => pruneSessions(projectId));
    },
    eventStored() {
      if (events === null) {
        if (++arrivals >= FIRST_LOOK) {
          arrivals = 0;
          once(pruneEvents);
        }
        return;
      }
      events++;
      if (events > limits.events) once(pruneEvents);
    },
    async idle() {
      await running;
    },
  };
}

/**
 * One pass over a project's sessions: past `limit`, deletes the oldest ended ones down to
 * LOW_WATER of it. The index says each session's state, so choosing what to delete reads no
 * record. Returns how many are left (the pruner's new count).
 * @example const left = await deleteOldSessions(stores, "prj_…", 10_000, log);
 */
export async function deleteOldSessions(
  stores: Stores,
  projectId: string,
  limit: number,
  log: Logger,
): Promise<number> {
  const entries = await stores.sessionIndex.entries(projectId);
  const target = Math.floor(limit * LOW_WATER);
  let excess = entries.length > limit ? entries.length - target : 0;
  let left = entries.length;
  for (const entry of entries.reverse()) {
    if (excess <= 0) break;
    if (!isEnded(entry.state)) continue;
    await stores.sessions.delete(entry.id, projectId, entry.state);
    excess--;
    left--;
  }
  if (left < entries.length) {
    log.info(`pruned ${entries.length - left} old sessions of ${projectId}`);
  }
  return left;
}

/**
 * One pass over the events: past `limit`, deletes the oldest (ids sort by time) down to
 * LOW_WATER of it. Returns how many are left.
 * @example const left = await deleteOldEvents(stores, 100_000, log);
 */
export async function deleteOldEvents(stores: Stores, limit: number, log: Logger): Promise<number> {
  const keys = (await stores.events.keys()).sort();
  const target = Math.floor(limit * LOW_WATER);
  const excess = keys.length > limit ? keys.length - target : 0;
  for (const key of keys.slice(0, excess)) await stores.events.delete(key);
  if (excess > 0) log.info(`pruned ${excess} old events`);
  return keys.length - excess;
}
