import { sameSecret } from "../secrets.ts";
import { slackEventData } from "./slack-fields.ts";
import {
  type ConnectionVars,
  fresh,
  hmac,
  type InboundRequest,
  isObject,
  mediaType,
  parseForm,
  parseJson,
  refuse,
  type Verdict,
} from "./verdict.ts";

/** A 200 with nothing in it: Slack shows nothing for a slash command answered so. */
const EMPTY: Verdict = { kind: "answer", status: 200, body: "", contentType: "text/plain" };

/** The bot's own message: its `user` is one the envelope says the app acts as. */
function ownMessage(envelope: Record<string, unknown>, event: Record<string, unknown>): boolean {
  const auths = Array.isArray(envelope.authorizations) ? envelope.authorizations : [];
  const user = event.user;
  return typeof user === "string" && auths.some((a) => isObject(a) && a.user_id === user);
}

function eventsApi(envelope: Record<string, unknown>): Verdict {
  if (envelope.type === "url_verification") {
    const challenge = typeof envelope.challenge === "string" ? envelope.challenge : "";
    return {
      kind: "answer",
      status: 200,
      body: JSON.stringify({ challenge }),
      contentType: "application/json",
    };
  }
  // app_rate_limited and the like: acknowledged, nothing to run.
  if (envelope.type !== "event_callback") return EMPTY;
  const event = envelope.event;
  if (!isObject(event) || typeof event.type !== "string") {
    return refuse(400, "event_callback without an event type");
  }
  if (ownMessage(envelope, event)) return EMPTY;
  const delivery = typeof envelope.event_id === "string" ? envelope.event_id : null;
  return {
    kind: "events",
    delivery,
    events: [{ event_type: event.type, data: slackEventData(event) }],
  };
}

/**
 * The delivery key of a slash command or an interaction: they carry no `event_id`, but each has
 * a `trigger_id` that Slack makes for that one invocation, and a retry (`X-Slack-Retry-Num`)
 * sends the same body. Without one (`view_closed`, say) nothing is deduplicated.
 */
function invocation(fields: Record<string, unknown>): string | null {
  const id = fields.trigger_id;
  return typeof id === "string" && id !== "" ? `trigger_id:${id}` : null;
}

/**
 * A Slack request, checked as Slack documents it: `X-Slack-Request-Timestamp` within 5 minutes,
 * `X-Slack-Signature` = `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` under the
 * connection's `private_signing_secret` (AutoKitteh's name) or `signing_secret`. Then: Events
 * API (JSON; `url_verification` answered with its challenge; repeats known by `event_id`),
 * slash commands (form → `slash_command`) and interactions (form `payload=` → `interaction`),
 * repeats known by their `trigger_id`.
 * @example verifySlack(req, (n) => (n === "signing_secret" ? "8f742231b10e8888abcd99yyyzzz85a5" : undefined))
 */
export function verifySlack(req: InboundRequest, vars: ConnectionVars): Verdict {
  const secret = vars("private_signing_secret") || vars("signing_secret");
  if (!secret) {
    return refuse(403, "this connection has no signing_secret: requests are refused");
  }
  const timestamp = req.headers.get("x-slack-request-timestamp")?.trim();
  const signature = req.headers.get("x-slack-signature")?.trim();
  if (!timestamp || !signature) {
    return refuse(401, "X-Slack-Request-Timestamp and X-Slack-Signature are both required");
  }
  if (!fresh(timestamp, req.now)) {
    return refuse(401, "X-Slack-Request-Timestamp is not within 5 minutes of now");
  }
  const expected = `v0=${hmac(secret, `v0:${timestamp}:`, req.body).toString("hex")}`;
  if (!sameSecret(signature.toLowerCase(), expected)) {
    return refuse(401, "X-Slack-Signature does not match the body");
  }
  const type = mediaType(req.headers);
  if (type === "application/json") {
    const envelope = parseJson(Buffer.from(req.body).toString("utf8"));
    if (!isObject(envelope)) return refuse(400, "the body is not a JSON object");
    return eventsApi(envelope);
  }
  if (type !== "application/x-www-form-urlencoded") {
    return refuse(400, `content type "${type}": Slack sends JSON or a form`);
  }
  const form = parseForm(req.body);
  if (form.payload !== undefined) {
    const payload = parseJson(form.payload);
    if (!isObject(payload)) return refuse(400, "payload= is not a JSON object");
    return {
      kind: "events",
      delivery: invocation(payload),
      events: [{ event_type: "interaction", data: payload }],
    };
  }
  if (form.command !== undefined) {
    return {
      kind: "events",
      delivery: invocation(form),
      events: [{ event_type: "slash_command", data: form }],
    };
  }
  return refuse(400, "a form without command or payload is no Slack request");
}
