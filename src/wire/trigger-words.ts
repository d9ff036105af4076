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
