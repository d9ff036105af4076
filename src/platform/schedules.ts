import type { Clock } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { Logger } from "../log.ts";
import { Scheduler } from "../schedules/scheduler.ts";
import { scheduleState } from "../schedules/state.ts";
import type { ComposedService } from "./compose.ts";
import { scheduleFirer } from "./schedule-fire.ts";

/** How long a slot's claim is kept: instances whose clocks differ by less agree on it. */
const CLAIM_MS = 10 * 60_000;

/**
 * The service's scheduler over its app (stores, sessions) and cluster, started: missed slots
 * fire now, the rest on time. The platform calls it after recovery and disposes it at shutdown.
 * @example const scheduler = await startScheduler({ hook, cluster, log }); … scheduler.dispose();
 */
export async function startScheduler(deps: {
  hook: Pick<ComposedService, "stores" | "sessions" | "pruner">;
  cluster: Cluster;
  log: Logger;
  clock?: Clock;
}): Promise<Scheduler> {
  const { hook, cluster, log } = deps;
  const scheduler = new Scheduler({
    projects: hook.stores.projects,
    state: scheduleState(hook.stores.storage),
    claim: (triggerId, due) => cluster.once(`schedule:${triggerId}:${due}`, CLAIM_MS),
    fire: scheduleFirer({ stores: hook.stores, sessions: hook.sessions, log }),
    log,
    clock: deps.clock,
  });
  await scheduler.start();
  return scheduler;
}
