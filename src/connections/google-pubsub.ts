import { type GoogleCaller, googleCall, googleProblem, readPages } from "./google-api.ts";
import { snakeKeys } from "./google-events.ts";
import type { ConnectionVars, InboundEvent } from "./verdict.ts";
import { isObject, parseJson } from "./verdict.ts";

/** The Google integrations whose changes come through Cloud Pub/Sub pushes. */
export type PubsubKind = "gmail" | "googleforms";

export const isPubsubKind = (integration: string): integration is PubsubKind =>
  integration === "gmail" || integration === "googleforms";

/** AutoKitteh's var names for what the service keeps of a connection's watches. */
export const PUBSUB_VARS = {
  gmail: { expiration: "GmailWatchExpiration", cursor: "GmailHistoryID", key: "user_email" },
  googleforms: {
    expiration: "FormWatchesExpiration",
    responses: "FormResponsesWatchID",
    schema: "FormSchemaWatchID",
    key: "FormID",
  },
} as const;

/** Every var a removed connection's watches leave to clear (user_email and FormID stay). */
export const WATCH_STATE_VARS: Record<PubsubKind, string[]> = {
  gmail: ["GmailWatchExpiration", "GmailHistoryID"],
  googleforms: ["FormWatchesExpiration", "FormResponsesWatchID", "FormSchemaWatchID"],
};

/** A Pub/Sub push as the service reads it: the message's data and attributes. */
export interface PubsubMessage {
  data: Record<string, unknown>;
  attributes: Record<string, string>;
  publishTime: string;
  /** Pub/Sub's id of the message: a redelivery carries the same one. */
  messageId: string;
}

/**
 * A Pub/Sub push body: the wrapped form (`{message: {data: <base64>, attributes, publishTime}}`)
 * or, with payload unwrapping on, the data itself as the body and the attributes as headers
 * (`Eventtype`, `Formid`, `Watchid`, as AutoKitteh's subscriptions send them). null when it is
 * neither.
 * @example pubsubMessage(body, headers)?.data.emailAddress // "me@example.com"
 */
export function pubsubMessage(body: Uint8Array, headers: Headers): PubsubMessage | null {
  const outer = parseJson(Buffer.from(body).toString("utf8"));
  const message = isObject(outer) && isObject(outer.message) ? outer.message : null;
  if (!message) {
    const attributes: Record<string, string> = {};
    for (const name of ["eventType", "formId", "watchId"]) {
      const v = headers.get(name);
      if (v) attributes[name] = v;
    }
    const publishTime = headers.get("x-goog-pubsub-publish-time") ?? "";
    const messageId = headers.get("x-goog-pubsub-message-id") ?? "";
    if (!isObject(outer) && !attributes.watchId) return null;
    return { data: isObject(outer) ? outer : {}, attributes, publishTime, messageId };
  }
  const text = typeof message.data === "string" ? message.data : "";
  const data = text ? parseJson(Buffer.from(text, "base64").toString("utf8")) : {};
  const attrs = isObject(message.attributes) ? message.attributes : {};
  const attributes = Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, String(v)]));
  const publishTime = String(message.publishTime ?? message.publish_time ?? "");
  const messageId = String(message.messageId ?? message.message_id ?? "");
  return { data: isObject(data) ? data : {}, attributes, publishTime, messageId };
}

/** The Forms API root: a connection's `base_url`, else `SVC_GOOGLE_API_URL`, else Google's. */
export const formsApiUrl = (baseUrl: string | undefined, env = process.env) =>
  (baseUrl || env.SVC_GOOGLE_API_URL || "https://forms.googleapis.com").replace(/\/+$/, "");

/** A call that must succeed: its JSON, or a thrown problem in words. */
async function must(caller: GoogleCaller, method: string, path: string, body?: unknown) {
  const answer = await googleCall(caller, method, path, body);
  const problem = googleProblem(answer);
  if (problem) throw new Error(`${method} ${path.split("?")[0]}: ${problem}`);
  return answer.json;
}

/**
 * Gmail's `users.watch` on the mailbox, publishing to `topic`: renews a watch as well (Gmail
 * keeps one per mailbox). The vars to save: the expiry (RFC 3339, AutoKitteh's), the history
 * id to read from (only when none is saved: a renewal keeps the cursor) and the mailbox's
 * address (`users.getProfile`) when `user_email` is not set yet. Throws a problem in words.
 * @example await watchGmail(caller, vars, "projects/p/topics/gmail") // { GmailWatchExpiration, … }
 */
export async function watchGmail(caller: GoogleCaller, vars: ConnectionVars, topic: string) {
  const made = await must(caller, "POST", "/gmail/v1/users/me/watch", { topicName: topic });
  const set: Record<string, string> = {
    GmailWatchExpiration: new Date(Number(made.expiration ?? 0)).toISOString(),
  };
  if (!vars("GmailHistoryID")) set.GmailHistoryID = String(made.historyId ?? "");
  if (!vars("user_email")) {
    const profile = await must(caller, "GET", "/gmail/v1/users/me/profile");
    set.user_email = String(profile.emailAddress ?? "");
  }
  return set;
}

/** Gmail's `users.stop`: null once stopped, else the problem in words. Never throws. */
export async function stopGmail(caller: GoogleCaller): Promise<string | null> {
  try {
    return googleProblem(await googleCall(caller, "POST", "/gmail/v1/users/me/stop", {}));
  } catch (e) {
    return `Google unreachable: ${(e as Error).message}`;
  }
}

/** A form's watch path (`/v1/forms/<id>/watches[/<watch>]`). */
const watchesPath = (form: string, watch = "") =>
  `/v1/forms/${encodeURIComponent(form)}/watches${watch ? `/${encodeURIComponent(watch)}` : ""}`;

/**
 * The form's (`FormID`) two watches, `SCHEMA` and `RESPONSES`, publishing to `topic`: each
 * saved one renewed (`watches.renew`), made again only when Google no longer has it (404),
 * else made (`watches.create`). The vars to save: both ids and the earlier expiry. Throws a problem.
 * @example await watchForms(caller, vars, "projects/p/topics/forms") // { FormSchemaWatchID, … }
 */
export async function watchForms(caller: GoogleCaller, vars: ConnectionVars, topic: string) {
  const form = vars("FormID")!;
  const set: Record<string, string> = {};
  let expires = "";
  for (const [type, name] of [
    ["SCHEMA", PUBSUB_VARS.googleforms.schema],
    ["RESPONSES", PUBSUB_VARS.googleforms.responses],
  ] as const) {
    const old = vars(name);
    const renewed = old
      ? await googleCall(caller, "POST", `${watchesPath(form, old)}:renew`, {})
      : null;
    // Only a watch Google no longer has is made again: any other failure makes no second one.
    const problem = renewed && renewed.status !== 404 ? googleProblem(renewed) : null;
    if (problem) throw new Error(`POST ${watchesPath(form, old)}:renew: ${problem}`);
    const watch =
      renewed && renewed.status < 300
        ? renewed.json
        : await must(caller, "POST", watchesPath(form), {
            watch: { target: { topic: { topicName: topic } }, eventType: type },
          });
    set[name] = String(watch.id ?? "");
    const at = String(watch.expireTime ?? "");
    if (!expires || at < expires) expires = at;
  }
  set[PUBSUB_VARS.googleforms.expiration] = expires;
  return set;
}

/** Deletes the form's saved watches: the problems in words (none: []). Never throws. */
export async function deleteFormWatches(caller: GoogleCaller, vars: ConnectionVars) {
  const problems: string[] = [];
  const form = vars("FormID") ?? "";
  for (const name of [PUBSUB_VARS.googleforms.schema, PUBSUB_VARS.googleforms.responses]) {
    const id = vars(name);
    if (!id || !form) continue;
    try {
      const answer = await googleCall(caller, "DELETE", watchesPath(form, id));
      const problem = answer.status === 404 ? null : googleProblem(answer);
      if (problem) problems.push(`${id}: ${problem}`);
    } catch (e) {
      problems.push(`${id}: Google unreachable: ${(e as Error).message}`);
    }
  }
  return problems;
}

/**
 * A Gmail notification's event: `mailbox_change` with AutoKitteh's data (`email_address`,
 * `history_id`, `publish_time`) and `history`, the mailbox's history records since the saved
 * history id (`users.history.list`, every page, snake_cased: `messages_added`, …); none when
 * the history is empty (another push's read took it). The cursor to save next; a history id
 * Google no longer has (404) starts over from the notification's.
 * @example const { events, cursor } = await readGmail(caller, vars, message);
 */
export async function readGmail(caller: GoogleCaller, vars: ConnectionVars, m: PubsubMessage) {
  const from = vars(PUBSUB_VARS.gmail.cursor);
  const given = String(m.data.historyId ?? "");
  const list = from
    ? await readPages(
        caller,
        (page) =>
          `/gmail/v1/users/me/history?startHistoryId=${encodeURIComponent(from)}${
            page ? `&pageToken=${encodeURIComponent(page)}` : ""
          }`,
        "history",
        "historyId",
      )
    : { items: [], next: given, gone: false };
  const cursor = list.gone ? given : list.next || from || given;
  return { events: list.items.length ? [gmailEvent(m, list.items)] : [], cursor };
}

/**
 * Gmail's `mailbox_change` of a push's message and the history records read for it.
 * @example gmailEvent(message, [{ id: "101", messagesAdded: [] }]).data.history[0].messages_added
 */
export function gmailEvent(m: PubsubMessage, history: Record<string, unknown>[]): InboundEvent {
  const data = {
    publish_time: m.publishTime,
    email_address: String(m.data.emailAddress ?? ""),
    history_id: Number(m.data.historyId ?? 0),
    history: snakeKeys(history),
  };
  return { event_type: "mailbox_change", data };
}

/**
 * A Forms push's event of what was read for it: `responses` with the latest of `responses`
 * (by `lastSubmittedTime`), or `schema` with the `form`.
 * @example formsEvent(message, { responses: [r0, r1] }).data.response.response_id
 */
export function formsEvent(
  m: PubsubMessage,
  read: { form?: Record<string, unknown>; responses?: Record<string, unknown>[] },
): InboundEvent {
  const type = (m.attributes.eventType ?? "").toUpperCase();
  const data: Record<string, unknown> = {
    event_type: type,
    form_id: m.attributes.formId ?? "",
    publish_time: m.publishTime,
  };
  if (type === "SCHEMA") data.form = snakeKeys(read.form ?? {});
  else {
    const all = read.responses ?? [];
    const last = all.reduce<Record<string, unknown>>(
      (a, r) => (String(r.lastSubmittedTime ?? "") > String(a.lastSubmittedTime ?? "") ? r : a),
      all[0] ?? {},
    );
    data.response = snakeKeys(last);
  }
  return { event_type: type.toLowerCase(), data };
}

/**
 * A Forms notification's event, as AutoKitteh makes it: the watch's event type in lower case
 * (`responses`, `schema`), data `event_type`, `form_id`, `publish_time` and, read with the
 * connection's token, `response` (the latest response, `responses.list`) or `form`
 * (`forms.get`), snake_cased. Throws a problem in words.
 * @example (await readForms(caller, vars, message)).event_type // "responses"
 */
export async function readForms(
  caller: GoogleCaller,
  vars: ConnectionVars,
  m: PubsubMessage,
): Promise<InboundEvent> {
  const form = m.attributes.formId || vars("FormID") || "";
  const base = `/v1/forms/${encodeURIComponent(form)}`;
  const message = { ...m, attributes: { ...m.attributes, formId: form } };
  if ((m.attributes.eventType ?? "").toUpperCase() === "SCHEMA") {
    return formsEvent(message, { form: await must(caller, "GET", base) });
  }
  const got = (await must(caller, "GET", `${base}/responses`)).responses;
  return formsEvent(message, { responses: Array.isArray(got) ? got.filter(isObject) : [] });
}
