import { sameSecret } from "../secrets.ts";
import {
  type ConnectionVars,
  type InboundRequest,
  isObject,
  mediaType,
  parseJson,
  refuse,
  type Verdict,
} from "./verdict.ts";

/** The update fields AutoKitteh takes an event type from, in its order. */
const UPDATE_TYPES = [
  ...["message", "callback_query", "edited_message", "inline_query", "chosen_inline_result"],
  ...["channel_post", "edited_channel_post", "shipping_query", "pre_checkout_query", "poll"],
  ...["poll_answer", "my_chat_member", "chat_member", "chat_join_request", "message_reaction"],
  "message_reaction_count",
];

/**
 * The event type AutoKitteh gives a Telegram update: the first of its update fields present
 * (`message`, `callback_query`, …), else AutoKitteh's `unknown telegram event`.
 * @example telegramEventType({ update_id: 1, message: {} }) // "message"
 */
export function telegramEventType(update: Record<string, unknown>): string {
  return UPDATE_TYPES.find((t) => t in update) ?? "unknown telegram event";
}

/**
 * A Telegram update posted to the URL the service gave `setWebhook` (telegram-webhooks.ts):
 * refused unless `X-Telegram-Bot-Api-Secret-Token` equals the connection's `SecretToken`
 * (compared in constant time; missing or wrong: 401; no `SecretToken`: 403). The body is a JSON
 * object; the event is `{event_type: telegramEventType(update), data: the update}`, as
 * AutoKitteh delivers it; `update_id` (the same on Telegram's retries) makes repeats one event.
 * @example verifyTelegram(req, (n) => (n === "SecretToken" ? "abc" : undefined))
 */
export function verifyTelegram(req: InboundRequest, vars: ConnectionVars): Verdict {
  const expected = vars("SecretToken");
  if (!expected) {
    return refuse(403, "this connection has no SecretToken (its webhook is not set): refused");
  }
  const given = req.headers.get("x-telegram-bot-api-secret-token");
  if (given === null) return refuse(401, "X-Telegram-Bot-Api-Secret-Token is missing");
  if (!sameSecret(given, expected)) {
    return refuse(401, "X-Telegram-Bot-Api-Secret-Token does not match");
  }
  const type = mediaType(req.headers);
  if (type !== "application/json") {
    return refuse(400, `content type "${type}": Telegram sends application/json`);
  }
  const update = parseJson(Buffer.from(req.body).toString("utf8"));
  if (!isObject(update)) return refuse(400, "the body is not a JSON object");
  const id = update.update_id;
  const delivery = typeof id === "number" || typeof id === "string" ? String(id) : null;
  return {
    kind: "events",
    delivery,
    events: [{ event_type: telegramEventType(update), data: update }],
  };
}
