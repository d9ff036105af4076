import { newId } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { EventRecord, ScheduleData } from "../model/records.ts";
import type { Firing } from "../schedules/scheduler.ts";
import type { Stores } from "../storage/stores.ts";
import type { SessionManager } from "./manager.ts";

/** The event type of a schedule's events (a webhook's is its method). */
export const SCHEDULE_EVENT_TYPE = "schedule";

export interface FireDeps {
  stores: Stores;
  sessions: Pick<SessionManager, "hasCapacity" | "start" | "publishEvent">;
  log: Logger;
  /** Told after each stored event (retention counts them). */
  onEvent?: () => void;
}

/**
 * What a firing does, as a webhook request would: store the event, hand it to the trigger's
 * subscribers, and start the trigger's session on the active deployment (when it has a `call`).
 * @example const fire = scheduleFirer({ stores, sessions, log }); await fire(firing);
 */
export function scheduleFirer(deps: FireDeps): (firing: Firing) => Promise<void> {
  return async ({ doc, trigger, due, fired, missed }) => {
    const deploymentId = doc.project.active_deployment_id;
    const deployment = deploymentId ? await deps.stores.deployments.get(deploymentId) : null;
    if (!deploymentId || !deployment) return;
    const where = `schedule trigger ${doc.project.name}/${trigger.name}`;
    let starts = trigger.call !== null;
    if (starts && !deps.sessions.hasCapacity()) {
      deps.log.warn(
        `${where}: too many sessions are waiting to run; slot ${due.toISOString()} starts none`,
      );
      starts = false;
    }
    const data: ScheduleData = {
      schedule: trigger.schedule ?? "",
      timezone: trigger.timezone ?? "UTC",
      due: due.toISOString(),
      fired: fired.toISOString(),
      missed,
    };
    const event: EventRecord = {
      id: newId("evt"),
      project_id: doc.project.id,
      trigger_id: trigger.id,
      trigger_name: trigger.name,
      webhook_id: "",
      event_type: SCHEDULE_EVENT_TYPE,
      data,
      session_id: starts ? newId("ses") : null,
      created_at: fired.toISOString(),
    };
    await deps.stores.events.put(event);
    deps.onEvent?.();
    deps.sessions.publishEvent(`${doc.project.id}:${trigger.name}`, {
      event_id: event.id,
      session_id: event.session_id,
      event_type: event.event_type,
      data,
    });
    if (!event.session_id) return;
    deps.sessions.start({
      sessionId: event.session_id,
      doc,
      trigger,
      deploymentId,
      buildId: deployment.build_id,
      event,
    });
    if (missed > 0) deps.log.info(`${where}: ${missed} missed slot(s) folded into one firing`);
  };
}
