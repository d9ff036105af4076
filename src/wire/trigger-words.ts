/**
 * A trigger in words, one wording for `cli trigger list` (from the API's JSON) and the web UI
 * (from the stored record): the fields both have.
 */
export interface TriggerWords {
  /** Absent from services older than schedule triggers: a webhook. */
  type?: "webhook" | "schedule" | "connection";
  is_sync: boolean;
  /** False for a connection trigger whose integration delivers no events here. */
  active?: boolean;
  schedule?: string | null;
  timezone?: string | null;
}

/**
 * What kind of trigger: `sync` or `async` for a webhook, `schedule`, `connection`, or
 * `connection (inactive)` for one that never fires.
 * @example triggerKind({ type: "connection", is_sync: false, active: false }) // "connection (inactive)"
 */
export function triggerKind(t: TriggerWords): string {
  if (t.type === "schedule") return "schedule";
  if (t.type === "connection") return t.active === false ? "connection (inactive)" : "connection";
  return t.is_sync ? "sync" : "async";
}

/**
 * A schedule's cron text or descriptor, with its timezone unless UTC.
 * @example scheduleText({ is_sync: false, schedule: "0 9 * * 1-5", timezone: "Europe/Paris" }) // "0 9 * * 1-5 (Europe/Paris)"
 */
export function scheduleText(t: TriggerWords): string {
  const schedule = t.schedule ?? "";
  return t.timezone && t.timezone !== "UTC" ? `${schedule} (${t.timezone})` : schedule;
}

/** What `startedBy` reads of a session: the API's JSON and the stored record alike. */
export interface SessionWords {
  trigger_name: string;
  manual?: boolean;
}

/** How a session started by hand reads where a trigger's name would be. */
export const BY_HAND = "(started by hand)";

/**
 * What started a session, in the session lists of `cli session list` and the web UI: its
 * trigger's name, or {@link BY_HAND} for a manual run (no trigger).
 * @example startedBy({ trigger_name: "", manual: true }) // "(started by hand)"
 */
export function startedBy(s: SessionWords): string {
  return s.manual ? BY_HAND : s.trigger_name;
}
