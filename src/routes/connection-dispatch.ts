import { eventTypeMatches, type InboundEvent } from "../connections/index.ts";
import { compileFilter } from "../events/filter.ts";
import { newId } from "../ids.ts";
import type {
  ConnectionData,
  ConnectionRecord,
  EventRecord,
  ProjectDoc,
  TriggerRecord,
} from "../model/records.ts";
import type { SessionManager } from "../sessions/manager.ts";
import { connectionSource } from "../sessions/session-env.ts";
import type { Stores } from "../storage/stores.ts";

/** A connection's inbound id resolved: its project, itself, and the deployment that runs now. */
export interface ResolvedConnection {
  doc: ProjectDoc;
  connection: ConnectionRecord;
  deploymentId: string;
  buildId: string;
}

export interface DispatchDeps {
  stores: Stores;
  sessions: Pick<SessionManager, "accept" | "stored" | "publishEvent">;
  /** Told after each stored event (retention counts them). */
  onEvent?: () => void;
}

/** Whether a connection trigger takes an event: its event_type (aliases too), then its filter. */
function takes(integration: string, t: TriggerRecord, e: InboundEvent): boolean {
  if (!eventTypeMatches(integration, t.event_type, e.event_type)) return false;
  return !t.filter || compileFilter(t.filter).matches({ data: e.data, event_type: e.event_type });
}

/**
 * THE one place a connection's verified events enter the sessions: each event is stored (one
 * record per trigger it starts a session of, else one record with no session), handed to the
 * subscribers of the connection and of each trigger that takes it (here and on other
 * instances), and starts the sessions of the connection's triggers that take it.
 * `firstEventId` is the id the first record gets (the delivery's dedup record names it).
 * @example const { event_ids } = await dispatchConnectionEvents(deps, resolved, events, newId("evt"));
 */
export async function dispatchConnectionEvents(
  deps: DispatchDeps,
  resolved: ResolvedConnection,
  events: InboundEvent[],
  firstEventId: string,
): Promise<{ event_ids: string[]; session_ids: string[] }> {
  const { doc, connection } = resolved;
  const triggers = doc.triggers.filter(
    (t) => t.type === "connection" && t.connection === connection.name,
  );
  const event_ids: string[] = [];
  const session_ids: string[] = [];
  let nextId = firstEventId;
  const takeId = () => {
    const id = nextId;
    nextId = "";
    return id || newId("evt");
  };
  for (const e of events) {
    const passing = triggers.filter((t) => takes(connection.integration, t, e));
    const starting = passing.filter((t) => t.call !== null);
    const records: { trigger: TriggerRecord | null; event: EventRecord }[] = (
      starting.length ? starting : [null]
    ).map((trigger) => ({
      trigger,
      event: {
        id: takeId(),
        project_id: doc.project.id,
        trigger_id: trigger?.id ?? "",
        trigger_name: trigger?.name ?? "",
        webhook_id: connection.inbound_id,
        connection: connection.name,
        event_type: e.event_type,
        data: e.data as ConnectionData,
        session_id: trigger ? newId("ses") : null,
        created_at: new Date().toISOString(),
      },
    }));
    for (const { event } of records) {
      await deps.stores.events.put(event);
      deps.onEvent?.();
      event_ids.push(event.id);
    }
    const wire = (event: EventRecord) => ({
      event_id: event.id,
      session_id: event.session_id,
      event_type: event.event_type,
      data: event.data,
    });
    const first = records[0]!.event;
    deps.sessions.publishEvent(connectionSource(doc.project.id, connection.name), wire(first));
    for (const t of passing) {
      const own = records.find((r) => r.trigger === t)?.event ?? first;
      deps.sessions.publishEvent(`${doc.project.id}:${t.name}`, wire(own));
    }
    for (const { trigger, event } of records) {
      if (!trigger || !event.session_id) continue;
      await deps.sessions.accept({
        sessionId: event.session_id,
        doc,
        trigger,
        deploymentId: resolved.deploymentId,
        buildId: resolved.buildId,
        event,
      });
      // Read your writes: the session's first record is in storage before its id goes out.
      await deps.sessions.stored(event.session_id);
      session_ids.push(event.session_id);
    }
  }
  return { event_ids, session_ids };
}
