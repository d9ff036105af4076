import { eventTypeMatches, type InboundEvent } from "../connections/index.ts";
import { compileFilter } from "../events/filter.ts";
import { newId } from "../ids.ts";
import type {
  ConnectionData,
  ConnectionRecord,
  ProjectDoc,
  TriggerRecord,
} from "../model/records.ts";
import type { IngestPlan, SessionManager } from "../sessions/manager.ts";

/** A connection's inbound id resolved: its project, itself, and the deployment that runs now. */
export interface ResolvedConnection {
  doc: ProjectDoc;
  connection: ConnectionRecord;
  deploymentId: string;
  buildId: string;
}

/** Whether a connection trigger takes an event: its event_type (aliases too), then its filter. */
function takes(integration: string, t: TriggerRecord, e: InboundEvent): boolean {
  if (t.call === null || !eventTypeMatches(integration, t.event_type, e.event_type)) return false;
  return !t.filter || compileFilter(t.filter).matches({ data: e.data, event_type: e.event_type });
}

/**
 * A connection's verified events into the sessions, through `ingest` with the connection as the
 * source. One event may start a session of each of the connection's triggers that takes it (as
 * AutoKitteh dispatches to every matching trigger), so the plans are made here: the first names
 * `firstEventId` (the delivery's dedup record holds it) and alone is published to
 * `subscribe("<connection>")`; an event no trigger takes is stored and published, starting none.
 * @example const { session_ids } = await dispatchConnectionEvents(sessions, resolved, events, newId("evt"));
 */
export async function dispatchConnectionEvents(
  sessions: Pick<SessionManager, "ingest">,
  resolved: ResolvedConnection,
  events: InboundEvent[],
  firstEventId: string,
): Promise<{ event_ids: string[]; session_ids: string[] }> {
  const { doc, connection } = resolved;
  const triggers = doc.triggers.filter(
    (t) => t.type === "connection" && t.connection === connection.name,
  );
  const out = { event_ids: [] as string[], session_ids: [] as string[] };
  for (const e of events) {
    const starting = triggers.filter((t) => takes(connection.integration, t, e));
    const plans: IngestPlan[] = (starting.length ? starting : [null]).map((trigger, i) => ({
      eventId: out.event_ids.length === 0 && i === 0 ? firstEventId : newId("evt"),
      sessionId: trigger ? newId("ses") : null,
      trigger,
      publish: i === 0,
      sync: false,
    }));
    for (const plan of plans) {
      const done = await sessions.ingest(
        {
          source: { kind: "connection", name: connection.name },
          doc,
          deployment: { id: resolved.deploymentId, buildId: resolved.buildId },
          event: {
            type: e.event_type,
            data: e.data as ConnectionData,
            webhook_id: connection.inbound_id,
          },
        },
        plan,
      );
      out.event_ids.push(done.event.id);
      if (done.session) out.session_ids.push(done.session.id);
    }
  }
  return out;
}
