import type { HandlerEvent } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";

/**
 * Events up to this size (JSON) travel inside the message on the `events` stream; larger ones
 * by id, read from storage by each receiver, so the stream's bound (entries) bounds its bytes.
 */
export const INLINE_EVENT_BYTES = 64 * 1024;

/** A webhook event on the `events` stream: inline, or by id (`event` absent). */
export type EventMessage = {
  id: string;
  origin: string;
  source: string;
  event?: HandlerEvent;
};

/**
 * The message for `event`, inline when small.
 * @example await bus.send("events", eventMessage(instanceId, "prj_1:wake", event));
 */
export function eventMessage(origin: string, source: string, event: HandlerEvent): EventMessage {
  const small = JSON.stringify(event.data ?? null).length <= INLINE_EVENT_BYTES;
  return small
    ? { id: event.event_id, origin, source, event }
    : { id: event.event_id, origin, source };
}

/**
 * The event a message carries, read from storage when it came by id; null when it is gone or
 * the message is not one.
 * @example const event = await eventOf(message, stores);
 */
export async function eventOf(m: unknown, stores: Stores): Promise<HandlerEvent | null> {
  const msg = m as Partial<EventMessage> | null;
  if (!msg || typeof msg.id !== "string" || typeof msg.source !== "string") return null;
  if (msg.event) return msg.event;
  const rec = await stores.events.get(msg.id).catch(() => null);
  if (!rec) return null;
  return {
    event_id: rec.id,
    session_id: rec.session_id,
    event_type: rec.event_type,
    data: rec.data,
  } as HandlerEvent;
}
