import type { Cluster } from "../cluster/cluster.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import { idTime } from "../ids.ts";
import type { HandlerEvent } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";
import { type EventMessage, eventOf } from "./event-wire.ts";
import type { SessionJournal } from "./journal.ts";

/** The webhook events handed to subscribers on every instance since `sinceMs`, oldest first. */
export type EventHistory = (sinceMs: number) => Promise<{ source: string; event: HandlerEvent }[]>;

/**
 * How far back the history is read before the oldest subscription: the stream's entry times are
 * Redis's clock, not the instances'. Events are then chosen by the time in their own ids.
 */
const READ_SLACK_MS = 60_000;

/**
 * Hands the subscriptions a taken-over durable session reopened the events published since each
 * was created (the time is in its id) that its journal does not show taken: those sent while
 * its owner was dead reached nobody. Returns how many were handed over.
 * @example await backfill(history, subscriptions, journal, journal.restoreSubscriptions(...));
 */
export async function backfill(
  history: EventHistory,
  subscriptions: Subscriptions,
  journal: SessionJournal,
  reopened: { id: string; source: string }[],
): Promise<number> {
  const times = reopened.map((r) => idTime(r.id)).filter((t): t is number => t !== null);
  if (times.length === 0) return 0;
  const past = await history(Math.min(...times) - READ_SLACK_MS).catch(() => []);
  const taken = journal.consumedEvents();
  let n = 0;
  for (const { id, source } of reopened) {
    // From the moment it subscribed, as a live subscription would have seen them (the two
    // instances' clocks are assumed in step: see docs/scale-out.md).
    const from = idTime(id) ?? 0;
    const missed = past
      .filter((p) => p.source === source && !taken.has(p.event.event_id))
      .filter((p) => (idTime(p.event.event_id) ?? 0) >= from)
      .map((p) => p.event);
    n += subscriptions.backfill(id, missed);
  }
  return n;
}

/**
 * The history of webhook events on the cluster bus, loaded (a large one is stored by id).
 * @example await eventHistory(cluster, stores)(Date.now() - 60_000);
 */
export function eventHistory(cluster: Cluster, stores: Stores): EventHistory {
  return async (sinceMs) => {
    const out: { source: string; event: HandlerEvent }[] = [];
    for (const m of await cluster.bus.since("events", sinceMs)) {
      const event = await eventOf(m, stores);
      if (event) out.push({ source: (m as EventMessage).source, event });
    }
    return out;
  };
}
