import { isObject } from "./verdict.ts";

/**
 * A field's zero value, as AutoKitteh hands a Slack event field that Slack left out: its Go
 * struct's zero (`""`, `0`, `false`, an empty list), `null` for a struct held by pointer (and
 * the struct's own fields filled when present), a list's items filled when they are structs.
 */
type Field = "" | 0 | false | "list" | { ptr: Shape } | { list: Shape };
type Shape = () => Record<string, Field>;

const edited: Shape = () => ({ user: "", ts: "" });
const botProfile: Shape = () => ({
  id: "",
  app_id: "",
  team_id: "",
  name: "",
  deleted: false,
  updated: 0,
});
const reaction: Shape = () => ({ name: "", users: "list", count: 0 });

/** AutoKitteh's chat.Message: a `message` event, and the message inside an edit or a broadcast. */
const message: Shape = () => ({
  type: "",
  subtype: "",
  hidden: false,
  text: "",
  blocks: "list",
  edited: { ptr: edited },
  user: "",
  app_id: "",
  bot_id: "",
  bot_profile: { ptr: botProfile },
  parent_user_id: "",
  team: "",
  channel: "",
  channel_type: "",
  ts: "",
  event_ts: "",
  permalink: "",
  reply_count: 0,
  reply_users_count: 0,
  latest_reply: "",
  reply_users: "list",
  last_read: "",
  unread_count: 0,
  unread_count_display: 0,
  is_locked: false,
  subscribed: false,
  is_starred: false,
  pinned_to: "list",
  reactions: { list: reaction },
  inviter: "",
  name: "",
  old_name: "",
  purpose: "",
  topic: "",
  message: { ptr: message },
  previous_message: { ptr: message },
  deleted_ts: "",
  thread_ts: "",
  root: { ptr: message },
  client_msg_id: "",
});

const appMention: Shape = () => ({
  type: "",
  user: "",
  team: "",
  channel: "",
  ts: "",
  event_ts: "",
  thread_ts: "",
  text: "",
  blocks: "list",
  client_msg_id: "",
});

const item: Shape = () => ({ type: "", channel: "", ts: "", file: "", file_comment: "" });
const reactionEvent: Shape = () => ({
  type: "",
  user: "",
  reaction: "",
  item: { ptr: item },
  item_user: "",
  event_ts: "",
});

const memberEvent: Shape = () => ({
  type: "",
  channel: "",
  channel_type: "",
  user: "",
  inviter: "",
  is_moved: false,
  event_ts: "",
  team: "",
  enterprise: "",
});

const topic: Shape = () => ({ value: "", creator: "", last_set: 0 });
const channel: Shape = () => ({
  id: "",
  name: "",
  name_normalized: "",
  previous_names: "list",
  creator: "",
  user: "",
  is_member: false,
  is_read_only: false,
  is_thread_only: false,
  topic: { ptr: topic },
  purpose: { ptr: topic },
  last_read: "",
  unread_count: 0,
  unread_count_display: 0,
  is_archived: false,
  is_channel: false,
  is_frozen: false,
  is_general: false,
  is_group: false,
  is_im: false,
  is_mpim: false,
  is_open: false,
  is_private: false,
  is_shared: false,
  is_org_shared: false,
  is_ext_shared: false,
  is_pending_ext_shared: false,
  context_team_id: "",
  shared_team_ids: "list",
  pending_connected_team_ids: "list",
  created: 0,
  updated: 0,
  unlinked: 0,
  latest: { ptr: message },
  locale: "",
  num_members: 0,
  priority: 0,
});
const channelCreated: Shape = () => ({ type: "", channel: { ptr: channel }, event_ts: "" });

const member = [
  "channel_archive",
  "channel_left",
  "channel_unarchive",
  "group_archive",
  "group_close",
  "group_deleted",
  "group_left",
  "group_open",
  "group_unarchive",
  "member_joined_channel",
  "member_left_channel",
];

/** The event types AutoKitteh turns into a Go struct, and that struct (integrations/slack/events). */
const SHAPES: Record<string, Shape> = {
  message,
  app_mention: appMention,
  reaction_added: reactionEvent,
  reaction_removed: reactionEvent,
  channel_created: channelCreated,
  channel_rename: channelCreated,
  group_rename: channelCreated,
  ...Object.fromEntries(member.map((t) => [t, memberEvent])),
};

/** `value` with every field of `shape` it lacks set to its zero, nested structs alike. */
function fill(value: Record<string, unknown>, shape: Shape): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  for (const [name, field] of Object.entries(shape())) {
    const have = out[name];
    if (field === "list") out[name] = have ?? [];
    else if (typeof field !== "object") out[name] = have ?? field;
    else if ("ptr" in field) out[name] = isObject(have) ? fill(have, field.ptr) : (have ?? null);
    else if (Array.isArray(have)) {
      out[name] = have.map((x) => (isObject(x) ? fill(x, field.list) : x));
    } else out[name] = have ?? [];
  }
  return out;
}

/**
 * A Slack event's data as AutoKitteh hands it: every field of the Go struct AutoKitteh parses
 * that event type into, nested structs included, with its zero value where Slack left it out
 * (the edit of an unthreaded message has no `message.thread_ts`: it reads `""`); what Slack sent
 * beyond those fields is kept. Other event types, and every event, get `subtype`, `thread_ts`
 * and `bot_id` as `""` (programs test `data.bot_id == ''`).
 * @example slackEventData({ type: "message", subtype: "message_changed", message: { text: "x" } }).message.thread_ts // ""
 */
export function slackEventData(event: Record<string, unknown>): Record<string, unknown> {
  const shape = typeof event.type === "string" ? SHAPES[event.type] : undefined;
  return { subtype: "", thread_ts: "", bot_id: "", ...(shape ? fill(event, shape) : event) };
}
