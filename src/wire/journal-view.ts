/**
 * A durable session's journal step as the API answers it (`GET /sessions/{id}/log`) and the UI
 * shows it: its payloads left out (they are pickled), what it was, whether it failed, and
 * whether the latest run replayed it. One definition for both.
 */
import type { JournalStep, SessionRecord } from "../model/records.ts";

export interface JournalView {
  seq: number;
  kind: JournalStep["kind"];
  /** An activity's function. */
  function?: string;
  /** A subscription's source (a trigger name). */
  source?: string;
  /** A subscription's id (subscribe, unsubscribe). */
  subscription_id?: string;
  /** The event a `next_event` received. */
  event_id?: string;
  ok: boolean;
  /** The latest run replayed it from the journal. */
  replayed: boolean;
  /** Under a retry policy: the attempts made; `retry_at`: a pending one's next attempt (ISO). */
  attempts?: number;
  retry_at?: string;
}

/**
 * @example journalView({ seq: 0, kind: "activity", function: "h.f" }, record).function // "h.f"
 */
export function journalView(step: JournalStep, record: SessionRecord): JournalView {
  return {
    seq: step.seq,
    kind: step.kind,
    ...(step.kind === "activity" ? { function: step.function } : {}),
    ...(step.kind === "subscribe" ? { source: step.name, subscription_id: step.value } : {}),
    ...(step.kind === "unsubscribe" ? { subscription_id: step.id } : {}),
    ...(step.kind === "next_event" && step.value && typeof step.value === "object"
      ? { event_id: (step.value as { event_id?: string }).event_id }
      : {}),
    ok: !stepFailed(step),
    replayed: step.seq < (record.replayed_steps ?? 0),
    ...(step.kind === "activity" && step.attempts !== undefined && { attempts: step.attempts }),
    ...(step.kind === "activity" &&
      step.retry_at !== undefined && { retry_at: new Date(step.retry_at).toISOString() }),
  };
}

/**
 * Whether a step records an error: its `error`, or an activity's exception kept apart.
 * @example stepFailed({ seq: 0, kind: "activity", function: "h.f", apart: { field: "error", parts: 2, bytes: 2e6 } }) // true
 */
export function stepFailed(step: JournalStep): boolean {
  if (step.kind === "outcome") return false;
  if (step.kind === "activity" && step.apart?.field === "error") return true;
  return "error" in step && step.error !== undefined && step.error !== "";
}

/**
 * What a step was about, in one word for people: its function, source, event or subscription.
 * @example stepWhat({ seq: 0, kind: "activity", function: "h.f", ok: true, replayed: false }) // "h.f"
 */
export const stepWhat = (v: JournalView): string =>
  v.function ?? v.source ?? v.event_id ?? v.subscription_id ?? "";
