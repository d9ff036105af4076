import { eventTypeMatches } from "../connections/index.ts";
import { compileFilter } from "../events/filter.ts";
import { newId } from "../ids.ts";
import type { EventRecord, ProjectDoc, TriggerRecord } from "../model/records.ts";
import type { StartInput } from "./session-record.ts";

// What comes in, and what it leads to: which triggers take an event, by one rule for every
// source, and the ids its records get. Decided before anything is stored (ingest.ts runs it).

/**
 * Where an event came in. It decides which triggers' sessions it starts, who of the running
 * sessions hears of it (`subscribe(<name>)`), and the rules below (POLICY).
 */
export type IngestSource =
  /** A request to a trigger's webhook (`ANY /webhooks/<webhook_id>`). */
  | { kind: "webhook"; trigger: TriggerRecord }
  /** A slot of a schedule trigger. */
  | { kind: "schedule"; trigger: TriggerRecord }
  /**
   * An inbound event of a connection: it starts a session of each of the connection's triggers
   * that takes it, and goes to the subscribers of `subscribe("<name>")`.
   */
  | { kind: "connection"; name: string }
  /** `start()` in a running session: `trigger` is its parent's with the child's entry point. */
  | { kind: "start"; trigger: TriggerRecord; parentId: string; memo: Record<string, string> }
  /** A new session from the stored event of an earlier one; `rerun`: the journal it reuses. */
  | ({ kind: "rerun"; trigger: TriggerRecord } & Pick<StartInput, "parentId" | "memo" | "rerun">)
  /** Started by hand (or its re-run): `trigger` stands for none, the event's data is the inputs. */
  | ({ kind: "manual"; trigger: TriggerRecord } & Pick<StartInput, "rerun">);

/** What came in: a new event (stored by `ingest`), or, for a re-run, the event stored before. */
export type IngestEvent =
  | {
      type: string;
      data: EventRecord["data"];
      /** A start()'s data in the SDK's wire form. */
      sdk_data?: Record<string, unknown>;
      /** The webhook (or connection address) it came through ("" for none). */
      webhook_id?: string;
      /** When it happened (default: now). */
      at?: string;
    }
  | { stored: EventRecord };

/** One event of a source, for a project's deployment. */
export interface IngestRequest {
  source: IngestSource;
  doc: ProjectDoc;
  /** The deployment whose build the session runs. */
  deployment: { id: string; buildId: string };
  event: IngestEvent;
}

/**
 * What one delivery brought: the events of one source that came in at once, in order (a
 * GitHub comment, then each slash command in it; one event for any other source).
 */
export interface Delivery extends Omit<IngestRequest, "event"> {
  events: IngestEvent[];
}

/**
 * One event record and what it leads to, decided before anything is stored: a delivery's
 * record (dedup) names the first plan's ids before the event is stored.
 */
export interface IngestPlan {
  event: IngestEvent;
  eventId: string;
  /** The session the event starts, or null (no call, not for this trigger's filter). */
  sessionId: string | null;
  /** The trigger whose session starts (or, with none, whose event it is). */
  trigger: TriggerRecord | null;
  /** Whether the source's subscribers hear of the event. */
  publish: boolean;
  /** Whether a held request waits for the session's final outcome. */
  sync: boolean;
}

const BUSY = "too many sessions are waiting to run; retry later";
const START_BUSY = "start: too many sessions are running; try later";

/**
 * The rules of each source: whether a trigger's `event_type` and `filter` decide if a session
 * starts; whether subscribers hear of the event (a webhook's call-less trigger: only when its
 * filter passes); where the session may run (`anywhere`: on the shared queue when there is one;
 * `here`: on this instance); and when no session may start now, the refusal (nothing is
 * stored), or null: the event is stored and starts nothing (a schedule's slot is not retried).
 */
export const POLICY = {
  webhook: { filtered: true, publish: "passed", where: "anywhere", refuse: BUSY },
  connection: { filtered: true, publish: "first", where: "anywhere", refuse: BUSY },
  schedule: { filtered: false, publish: "always", where: "here", refuse: null },
  start: { filtered: false, publish: "never", where: "here", refuse: START_BUSY },
  rerun: { filtered: false, publish: "never", where: "here", refuse: BUSY },
  manual: { filtered: false, publish: "never", where: "anywhere", refuse: BUSY },
} as const;

/**
 * The plans of a delivery, in order: for each event, a session of each trigger that takes it
 * (a connection's event may start several, as AutoKitteh dispatches to every matching trigger;
 * each gets its own event record, and only the first is published to `subscribe("<name>")`),
 * or one record that starts nothing. The first plan's event id is the delivery's.
 * @example const [plan] = planDelivery({ source: { kind: "webhook", trigger }, doc, deployment, events: [event] });
 */
export function planDelivery(delivery: Delivery): IngestPlan[] {
  const { source, doc } = delivery;
  if (source.kind !== "connection") {
    return delivery.events.map((event) => planFor(source, event));
  }
  const integration = doc.connections?.find((c) => c.name === source.name)?.integration ?? "";
  const triggers = doc.triggers.filter(
    (t) => t.type === "connection" && t.connection === source.name,
  );
  return delivery.events.flatMap((event) => {
    const { type, data } = typeAndData(event);
    const starting = triggers.filter((t) => t.call !== null && takes(t, type, data, integration));
    return (starting.length ? starting : [null]).map((trigger, i) => ({
      event,
      eventId: newId("evt"),
      sessionId: trigger ? newId("ses") : null,
      trigger,
      publish: i === 0,
      sync: false,
    }));
  });
}

/**
 * The one rule for whether a trigger takes an event, for every source that asks: its
 * `event_type` (empty or `*`: all; an HTTP method in any case; AutoKitteh's aliases, Slack's
 * `message_posted` for `message`), then its `filter` over `data` and `event_type`.
 * @example takes(trigger, "message", data, "slack")
 */
export function takes(
  trigger: TriggerRecord,
  type: string,
  data: unknown,
  integration = "http",
): boolean {
  if (!eventTypeMatches(integration, trigger.event_type, type)) return false;
  return !trigger.filter || compileFilter(trigger.filter).matches({ data, event_type: type });
}

/** The plan of one event of a source with one trigger: whether it starts that trigger's session. */
function planFor(source: Exclude<IngestSource, { kind: "connection" }>, event: IngestEvent) {
  const policy = POLICY[source.kind];
  const { trigger } = source;
  const stored = "stored" in event ? event.stored : null;
  const { type, data } = typeAndData(event);
  const passed = !policy.filtered || takes(trigger, type, data);
  const starts = passed && trigger.call !== null;
  const publish =
    policy.publish === "always" ||
    (policy.publish === "passed" && (trigger.call !== null || passed));
  return {
    event,
    eventId: stored ? stored.id : newId("evt"),
    sessionId: starts ? newId("ses") : null,
    trigger,
    publish,
    sync: starts && trigger.is_sync,
  };
}

function typeAndData(event: IngestEvent): { type: string; data: unknown } {
  if ("stored" in event) return { type: event.stored.event_type, data: event.stored.data };
  return event;
}
