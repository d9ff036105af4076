import { verifyAtlassianJwt } from "./jira-jwt.ts";
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
 * The OAuth app's client secret that Atlassian signs a dynamic webhook's JWT with: the
 * connection's `private_client_secret`, else the service's `JIRA_CLIENT_SECRET` (AutoKitteh's
 * names).
 * @example jiraClientSecret((n) => undefined) // process.env.JIRA_CLIENT_SECRET, or undefined
 */
export function jiraClientSecret(vars: ConnectionVars): string | undefined {
  return vars("private_client_secret") ?? (process.env.JIRA_CLIENT_SECRET || undefined);
}

/**
 * A delivery of one of the connection's Jira Cloud webhooks, in either of its two set-ups.
 * With `Authorization` (a dynamic webhook the service registered with the connection's OAuth
 * token, docs/connections.md): `Bearer <JWT>`, HS256 under the OAuth app's client secret
 * (`jiraClientSecret`), its time claims checked (`verifyAtlassianJwt`). Without it (an admin
 * webhook the user registered with a secret): `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the
 * raw body>` under `webhook_secret`. A set-up whose secret is unset refuses everything (403); a
 * dynamic webhook's delivery whose `matchedWebhookIds` does not name the connection's
 * `WebhookID` is refused (403).
 * The body is a JSON object with a string `webhookEvent`; the event is `{event_type:
 * webhookEvent without "jira:", data: the payload}`, as AutoKitteh delivers it;
 * `X-Atlassian-Webhook-Identifier` (the same on Jira's retries) makes repeats one event.
 * @example verifyJira(req, (n) => (n === "webhook_secret" ? "s3cret" : undefined))
 */
export function verifyJira(req: InboundRequest, vars: ConnectionVars): Verdict {
  const authorization = req.headers.get("authorization");
  const refused =
    authorization === null ? checkHubSignature(req, vars) : checkJwt(req, authorization, vars);
  // Every dynamic webhook of the OAuth app signs with the same secret: the delivery must also
  // name this connection's own webhook (its `WebhookID`), as AutoKitteh matches them.
  const ours = authorization === null ? undefined : vars("WebhookID");
  return refused ?? jiraEvents(req, ours);
}

/**
 * Refuses a dynamic webhook's payload whose `matchedWebhookIds` does not name `webhookId`, the
 * connection's registered webhook: another connection's (or another service's) webhook of the
 * same OAuth app.
 */
function checkMatched(payload: Record<string, unknown>, webhookId: string): Verdict | null {
  const matched = payload.matchedWebhookIds;
  const ids = Array.isArray(matched) ? matched.map(String) : [];
  if (ids.includes(webhookId)) return null;
  const named = ids.length ? `webhooks ${ids.join(", ").slice(0, 100)}` : "no webhook";
  return refuse(
    403,
    `the delivery names ${named} (matchedWebhookIds), not this connection's webhook ${webhookId}`,
  );
}

/** An admin webhook's delivery: refused unless X-Hub-Signature holds under `webhook_secret`. */
function checkHubSignature(req: InboundRequest, vars: ConnectionVars): Verdict | null {
  const secret = vars("webhook_secret");
  if (!secret) {
    return refuse(403, "this connection has no webhook_secret: deliveries are refused");
  }
  const problem = hubSignature(req, "x-hub-signature", secret);
  return problem ? refuse(401, problem) : null;
}

/** A dynamic webhook's delivery: refused unless its Bearer JWT holds under the client secret. */
function checkJwt(req: InboundRequest, authorization: string, vars: ConnectionVars) {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  if (!token) return refuse(401, "Authorization is not a Bearer JWT");
  const secret = jiraClientSecret(vars);
  if (!secret) {
    const detail =
      "this connection has no OAuth client secret (private_client_secret, or the service's JIRA_CLIENT_SECRET): deliveries with a JWT are refused";
    return refuse(403, detail);
  }
  const problem = verifyAtlassianJwt(token, secret, req.now);
  return problem ? refuse(401, problem) : null;
}

/**
 * A verified delivery's event (or the answer to one AutoKitteh drops); with `webhookId`, only
 * when its payload names that webhook (`checkMatched`).
 */
function jiraEvents(req: InboundRequest, webhookId: string | undefined): Verdict {
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
  const unmatched = webhookId === undefined ? null : checkMatched(payload, webhookId);
  if (unmatched) return unmatched;
  const eventType = jiraEventType(event);
  if (DROPPED.has(eventType)) {
    return { kind: "answer", status: 200, body: '{"ok":true}', contentType: "application/json" };
  }
  const delivery = req.headers.get("x-atlassian-webhook-identifier")?.trim() || null;
  return { kind: "events", delivery, events: [{ event_type: eventType, data: payload }] };
}
