/**
 * What starts a trigger, as the project's table and the trigger's page show it: a webhook's URL
 * and method, a schedule, or a connection and its event type. The words are `cli trigger list`'s.
 */
import type { TriggerRecord } from "../data.ts";
import { WebhookUrl } from "./url-field.tsx";

/** The cron text or descriptor, with its timezone unless UTC: `0 9 * * 1-5 (Europe/Paris)`. */
const scheduleOf = (t: TriggerRecord) =>
  t.timezone && t.timezone !== "UTC" ? `${t.schedule ?? ""} (${t.timezone})` : (t.schedule ?? "");

const methodOf = (t: TriggerRecord) => (t.event_type ? t.event_type.toUpperCase() : "any");

/**
 * Its kind (sync or async for a webhook, else `schedule` or `connection`), durable or not, and
 * `reuse process` only where set (as `cli trigger list`).
 * @example flags(trigger) // "async, not durable, reuse process"
 */
export const flags = (t: TriggerRecord) =>
  [
    t.type === "schedule" || t.type === "connection" ? t.type : t.is_sync ? "sync" : "async",
    t.is_durable ? "durable" : "not durable",
    ...(t.reuse_process ? ["reuse process"] : []),
  ].join(", ");

/**
 * The "Starts on" cell: the webhook URL with its copy button, or the schedule, or the connection.
 * @example <StartsOn t={trigger} origin="http://127.0.0.1:9980" />
 */
export function StartsOn({ t, origin }: { t: TriggerRecord; origin: string }) {
  if (t.type === "schedule") {
    return (
      <>
        schedule <span class="mono">{scheduleOf(t)}</span>
      </>
    );
  }
  if (t.type === "connection") {
    return (
      <>
        connection <span class="mono">{t.connection}</span>
      </>
    );
  }
  const url = `${origin}/webhooks/${t.webhook_id}`;
  return <WebhookUrl id={`url-${t.name}`} name={t.name} url={url} />;
}

/**
 * The "Event" cell: a webhook's method, a connection's event type (`any` for all), none for a
 * schedule.
 * @example eventOf(trigger) // "POST"
 */
export function eventOf(t: TriggerRecord): string {
  if (t.type === "schedule") return "—";
  if (t.type === "connection") return t.event_type || "any";
  return methodOf(t);
}

/**
 * The trigger page's facts about what starts it, as `<dt>`/`<dd>` pairs.
 * @example <dl><SourceFacts t={trigger} origin={origin} /></dl>
 */
export function SourceFacts({ t, origin }: { t: TriggerRecord; origin: string }) {
  if (t.type === "schedule") {
    return (
      <>
        <dt>Schedule</dt>
        <dd class="mono">{scheduleOf(t)}</dd>
      </>
    );
  }
  if (t.type === "connection") {
    return (
      <>
        <dt>Connection</dt>
        <dd class="mono">{t.connection}</dd>
        <dt>Event type</dt>
        <dd class="mono">{t.event_type || "any"}</dd>
      </>
    );
  }
  return (
    <>
      <dt>Webhook URL</dt>
      <dd>
        <WebhookUrl id="webhook-url" name={t.name} url={`${origin}/webhooks/${t.webhook_id}`} />
      </dd>
      <dt>Method</dt>
      <dd>{methodOf(t)}</dd>
    </>
  );
}

/**
 * Why a trigger's page has no test request form, or null for a webhook (it has a URL to send to).
 * @example noTestRequest(scheduleTrigger) // "A schedule trigger has no webhook URL: …"
 */
export function noTestRequest(t: TriggerRecord): string | null {
  if (t.webhook_id) return null;
  return t.type === "connection"
    ? "A connection trigger has no webhook URL to send a test request to: it starts on the events its provider posts to the connection's inbound URL (on the project's page)."
    : "A schedule trigger has no webhook URL to send a test request to: it starts on its schedule.";
}
