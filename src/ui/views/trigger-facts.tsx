/**
 * What starts a trigger, as the project's table and the trigger's page show it: a webhook's URL
 * and method, a schedule and its next firing, or a connection and its event type. The words are
 * `cli trigger list`'s.
 */

import { scheduleText, triggerKind } from "../../wire/trigger-words.ts";
import type { TriggerRecord, TriggerRow } from "../data.ts";
import { shortTime } from "./format.ts";
import { WebhookUrl } from "./url-field.tsx";

/** The URL a webhook trigger is called at. */
const webhookUrl = (origin: string, t: TriggerRecord) => `${origin}/webhooks/${t.webhook_id}`;

const methodOf = (t: TriggerRecord) => (t.event_type ? t.event_type.toUpperCase() : "any");

/**
 * Its kind (sync or async for a webhook, else `schedule`, `connection` or `connection
 * (inactive)`), durable or not, and `reuse process` only where set (as `cli trigger list`).
 * @example flags(trigger) // "async, not durable, reuse process"
 */
export const flags = (t: TriggerRow) =>
  [
    triggerKind(t),
    t.is_durable ? "durable" : "not durable",
    ...(t.reuse_process ? ["reuse process"] : []),
  ].join(", ");

/** A schedule's next firing as the UI writes times (UTC), or null when it has none. */
const NextFire = ({ t }: { t: TriggerRow }) =>
  t.next_fire ? <time datetime={t.next_fire}>{shortTime(t.next_fire)} UTC</time> : null;

/** Why a schedule has no next firing: `cli trigger list` shows `-` for both. */
const noNextFire = (deployed: boolean) => (deployed ? "no next firing" : "not deployed");

/** Where a trigger is shown, and whether its project has an active deployment. */
interface Shown {
  t: TriggerRow;
  origin: string;
  deployed: boolean;
}

/**
 * The "Starts on" cell: the webhook URL with its copy button, or the schedule and its next
 * firing, or the connection.
 * @example <StartsOn t={trigger} origin="http://127.0.0.1:9980" deployed />
 */
export function StartsOn({ t, origin, deployed }: Shown) {
  if (t.type === "schedule") {
    return (
      <>
        schedule <span class="mono">{scheduleText(t)}</span>,{" "}
        {t.next_fire ? (
          <>
            next <NextFire t={t} />
          </>
        ) : (
          noNextFire(deployed)
        )}
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
  return <WebhookUrl id={`url-${t.name}`} name={t.name} url={webhookUrl(origin, t)} />;
}

/**
 * The "Event" cell: a webhook's method, a connection's event type (`any` for all), none for a
 * schedule.
 * @example eventCell(trigger) // "POST"
 */
export function eventCell(t: TriggerRecord): string {
  if (t.type === "schedule") return "—";
  if (t.type === "connection") return t.event_type || "any";
  return methodOf(t);
}

/**
 * The trigger page's facts about what starts it, as `<dt>`/`<dd>` pairs.
 * @example <dl><SourceFacts t={trigger} origin={origin} deployed /></dl>
 */
export function SourceFacts({ t, origin, deployed }: Shown) {
  if (t.type === "schedule") {
    return (
      <>
        <dt>Schedule</dt>
        <dd class="mono">{scheduleText(t)}</dd>
        <dt>Next firing</dt>
        <dd>{t.next_fire ? <NextFire t={t} /> : noNextFire(deployed)}</dd>
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
        <WebhookUrl id="webhook-url" name={t.name} url={webhookUrl(origin, t)} />
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
export function noTestRequest(t: TriggerRow): string | null {
  if (t.webhook_id) return null;
  if (t.type === "connection" && !t.active) {
    return "A connection trigger has no webhook URL to send a test request to, and this one never fires: its connection's integration delivers no events here.";
  }
  return t.type === "connection"
    ? "A connection trigger has no webhook URL to send a test request to: it starts on the events its provider posts to the connection's inbound URL (on the project's page)."
    : "A schedule trigger has no webhook URL to send a test request to: it starts on its schedule.";
}
