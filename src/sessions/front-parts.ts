import type { EventRecord, HandlerEvent, SessionRecord } from "../model/records.ts";
import { parseStoredJson, type StoredJson } from "../storage/stored-json.ts";
import type { IngestParts } from "./ingest.ts";
import type { Lifecycle } from "./lifecycle.ts";
import type { OutcomeWait } from "./outcomes.ts";
import type { ClusterLink } from "./remote.ts";

/**
 * What the front door's thread took (src/front/): a session it committed (`created`, with its
 * event), run here unless the service is closing (then the next start recovers it), a held
 * one's outcome waited for from its start; a held session's admission; an event it stored
 * alone; an event for subscribers.
 */
export function frontParts(p: {
  lifecycle: Lifecycle;
  link: ClusterLink;
  admit: IngestParts["admit"];
  waitOutcome: (id: string, timeoutMs: number) => Promise<OutcomeWait>;
  onEvent: (() => void) | undefined;
}) {
  const { lifecycle, link, onEvent } = p;
  return {
    adopt(
      record: SessionRecord,
      event: StoredJson<EventRecord>,
      holdMs?: number,
      landed?: Promise<void>,
    ) {
      onEvent?.();
      if (!lifecycle.closing) lifecycle.startCreated(record, event, undefined, landed);
      // Held from its start: its run reaches an outcome in a later turn at the earliest.
      return holdMs === undefined ? null : p.waitOutcome(record.id, holdMs);
    },
    admitHeld: () => p.admit("here", true),
    eventStored: () => onEvent?.(),
    publish(source: string, text: StoredJson<EventRecord>) {
      if (link.listened(source)) link.publishEvent(source, handlerEvent(parseStoredJson(text)));
    },
  };
}

/** An event as subscribers get it. */
export function handlerEvent(e: EventRecord): HandlerEvent {
  return { event_id: e.id, session_id: e.session_id, event_type: e.event_type, data: e.data };
}
