import type { Logger } from "../log.ts";
import type { ScheduleData } from "../model/records.ts";
import type { Firing } from "../schedules/scheduler.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";

/** The event type of a schedule's events (a webhook's is its method). */
export const SCHEDULE_EVENT_TYPE = "schedule";

export interface FireDeps {
  stores: Stores;
  sessions: Pick<SessionManager, "ingest">;
  log: Logger;
}

/**
 * What a firing does, as a webhook request would: its event goes in (stored, handed to the
 * trigger's subscribers, and starting the trigger's session on the active deployment when it
 * has a `call`). A slot that finds no free slot keeps its event and starts nothing.
 * @example const fire = scheduleFirer({ stores, sessions, log }); await fire(firing);
 */
export function scheduleFirer(deps: FireDeps): (firing: Firing) => Promise<void> {
  return async ({ doc, trigger, due, fired, missed }) => {
    const deploymentId = doc.project.active_deployment_id;
    const deployment = deploymentId ? await deps.stores.deployments.get(deploymentId) : null;
    if (!deploymentId || !deployment) return;
    const where = `schedule trigger ${doc.project.name}/${trigger.name}`;
    const data: ScheduleData = {
      schedule: trigger.schedule ?? "",
      timezone: trigger.timezone ?? "UTC",
      due: due.toISOString(),
      fired: fired.toISOString(),
      missed,
    };
    const { session, turnedAway } = await deps.sessions.ingest({
      source: { kind: "schedule", trigger },
      doc,
      deployment: { id: deploymentId, buildId: deployment.build_id },
      event: { type: SCHEDULE_EVENT_TYPE, data, at: fired.toISOString() },
    });
    if (turnedAway) {
      deps.log.warn(
        `${where}: too many sessions are waiting to run; slot ${due.toISOString()} starts none`,
      );
    }
    if (session && missed > 0) {
      deps.log.info(`${where}: ${missed} missed slot(s) folded into one firing`);
    }
  };
}
