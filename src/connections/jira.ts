import {
  type ConnectionVars,
  hubSignature,
  type InboundRequest,
  isObject,
  mediaType,
  parseJson,
  refuse,
  type Verdict,
} from "./verdict.ts";

/**
 * Jira's events that AutoKitteh drops (a custom field changed by a program): answered, stored
 * nowhere, as AutoKitteh does.
 */
const DROPPED = new Set(["issue_property_set", "issue_property_deleted"]);

/**
 * The event type AutoKitteh gives a Jira payload: its `webhookEvent` without the `jira:`
 * prefix (`jira:issue_created` → `issue_created`; `comment_created` stays).
 * @example jiraEventType("jira:issue_updated") // "issue_updated"
 */
export const jiraEventType = (webhookEvent: string) => webhookEvent.replace(/^jira:/, "");

/**
 * A delivery of a Jira Cloud webhook the user registered (Jira administration → WebHooks, or
 * `POST /rest/webhooks/1.0/webhook`) with a secret: Jira signs such an admin webhook's raw body
 * with HMAC-SHA256 under that secret and sends `X-Hub-Signature: sha256=<hex>`, which must match
 * under the connection's `webhook_secret`. No secret set refuses everything (Jira sends no
 * signature without one). The body is a JSON object with a string `webhookEvent`; the event is
 * `{event_type: webhookEvent without "jira:", data: the payload}`, as AutoKitteh delivers it;
 * `X-Atlassian-Webhook-Identifier` (the same on Jira's retries) makes repeats one event.
 * @example verifyJira(req, (n) => (n === "webhook_secret" ? "s3cret" : undefined))
 */
export function verifyJira(req: InboundRequest, vars: ConnectionVars): Verdict {
  const secret = vars("webhook_secret");
  if (!secret) {
    return refuse(403, "this connection has no webhook_secret: deliveries are refused");
  }
  const problem = hubSignature(req, "x-hub-signature", secret);
  if (problem) return refuse(401, problem);
  const type = mediaType(req.headers);
  if (type !== "application/json") {
    return refuse(400, `content type "${type}": Jira sends application/json`);
  }
  const payload = parseJson(Buffer.from(req.body).toString("utf8"));
  if (!isObject(payload)) return refuse(400, "the body is not a JSON object");
  const event = payload.webhookEvent;
  if (typeof event !== "string" || event === "") {
    return refuse(400, "the body has no webhookEvent: it is not a Jira event");
  }
  const eventType = jiraEventType(event);
  if (DROPPED.has(eventType)) {
    return { kind: "answer", status: 200, body: '{"ok":true}', contentType: "application/json" };
  }
  const delivery = req.headers.get("x-atlassian-webhook-identifier")?.trim() || null;
  return { kind: "events", delivery, events: [{ event_type: eventType, data: payload }] };
}
