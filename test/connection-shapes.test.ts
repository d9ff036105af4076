import { createHmac } from "node:crypto";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyConfluence } from "../src/connections/confluence.ts";
import { calendarEvents, driveEvents } from "../src/connections/google-events.ts";
import { formsEvent, gmailEvent } from "../src/connections/google-pubsub.ts";
import {
  githubEvents,
  type InboundEvent,
  verifyHttp,
  verifyJira,
  verifySlack,
} from "../src/connections/index.ts";
import { verifyTelegram } from "../src/connections/telegram.ts";
import { buildWebhookData } from "../src/events/data.ts";
import { testPython } from "./support/python.ts";

/**
 * The events the inbound side makes (src/connections) and the ones `workflow_sdk.testing`'s
 * connection builders make for the same deliveries are equal, `event_type` and `data` alike:
 * a handler tested with the kit sees what the service would hand it.
 */
const SECRET = "slack-signing-s3cret";
const INBOUND_ID = "0000000000000000000000conn"; // the kit's default, testing.INBOUND_ID
const NOW = 1_700_000_000_000;

/** A case: what the Python kit is given (`kit`) and the TS side's events for it. */
interface Case {
  kit: unknown[];
  ts: InboundEvent[];
}

const slackVerdict = (body: string, type: string): InboundEvent[] => {
  const at = String(NOW / 1000);
  const signature = `v0=${createHmac("sha256", SECRET).update(`v0:${at}:${body}`).digest("hex")}`;
  const headers = new Headers({
    "content-type": type,
    "x-slack-request-timestamp": at,
    "x-slack-signature": signature,
  });
  const req = { method: "POST", headers, body: new TextEncoder().encode(body), now: NOW };
  const verdict = verifySlack(req, (n) => (n === "signing_secret" ? SECRET : undefined));
  if (verdict.kind !== "events") throw new Error(`not events: ${JSON.stringify(verdict)}`);
  return verdict.events;
};

const httpVerdict = (path: string, headers: Record<string, string>, body: string) => {
  const req = {
    method: "POST",
    headers: new Headers({ authorization: "Bearer t0ken", ...headers }),
    body: new TextEncoder().encode(body),
    now: NOW,
  };
  const data = buildWebhookData({
    ...req,
    url: new URL(`http://127.0.0.1/inbound/${INBOUND_ID}${path}`),
    webhookPrefix: `/inbound/${INBOUND_ID}`,
  });
  const verdict = verifyHttp(req, (n) => (n === "auth" ? "Bearer t0ken" : undefined), data);
  if (verdict.kind !== "events") throw new Error(`not events: ${JSON.stringify(verdict)}`);
  return verdict.events;
};

const jiraVerdict = (payload: unknown): InboundEvent[] => {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
  const headers = new Headers({ "content-type": "application/json", "x-hub-signature": signature });
  const req = { method: "POST", headers, body: new TextEncoder().encode(body), now: NOW };
  const verdict = verifyJira(req, (n) => (n === "webhook_secret" ? SECRET : undefined));
  if (verdict.kind !== "events") throw new Error(`not events: ${JSON.stringify(verdict)}`);
  return verdict.events;
};

/** A Confluence or Telegram delivery as the service's verifier takes it, signed or with its token. */
const atlasTelegramVerdict = (kind: "confluence" | "telegram", payload: unknown, suffix = "") => {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
  const headers = new Headers({
    "content-type": "application/json",
    "x-hub-signature": signature,
    "x-telegram-bot-api-secret-token": SECRET,
  });
  const req = { method: "POST", headers, body: new TextEncoder().encode(body), now: NOW, suffix };
  const vars = (n: string) =>
    n === "SecretToken" || n.startsWith("WebhookSecret_") ? SECRET : undefined;
  const verify = kind === "confluence" ? verifyConfluence : verifyTelegram;
  const verdict = verify(req, vars);
  if (verdict.kind !== "events") throw new Error(`not events: ${JSON.stringify(verdict)}`);
  return verdict.events;
};
const page = { page: { id: 7, title: "Runbook", spaceKey: "OPS" }, userAccountId: "u1" };
const update = { update_id: 9, message: { text: "hi", chat: { id: -1 } } };

const pr = {
  action: "opened",
  number: 7,
  pull_request: {
    number: 7,
    body: "LGTM\n/deploy  staging\tnow \n```\n/not-this\n```\n/ no\n/retry",
  },
  repository: { full_name: "octo/widgets" },
};
const mention = { type: "app_mention", user: "U1", channel: "C9", ts: "1.2", text: "<@UB> hi" };
const botMessage = { type: "message", user: "U2", bot_id: "B7", thread_ts: "0.9", text: "x" };
// The edit of a message that was never in a thread: Slack sends no thread_ts, at any depth.
const edited = {
  type: "message",
  subtype: "message_changed",
  hidden: true,
  channel: "C1",
  ts: "2.0",
  message: {
    type: "message",
    user: "U1",
    text: "fixed",
    ts: "1.0",
    edited: { user: "U1", ts: "2.0" },
  },
  previous_message: {
    type: "message",
    user: "U1",
    text: "fixd",
    ts: "1.0",
    reactions: [{ name: "x" }],
  },
};
const reacted = { type: "reaction_added", user: "U1", reaction: "tada", item: { type: "message" } };
const joined = { type: "member_joined_channel", user: "U1", channel: "C1" };
const created = {
  type: "channel_created",
  channel: { id: "C2", name: "new", topic: { value: "t" } },
};
const slashForm =
  "command=%2Fdeploy&text=prod+now&user_id=U1&channel_id=C9&response_url=https%3A%2F%2Fhooks.slack.com%2Fx";
const interaction = { type: "block_actions", user: { id: "U1" }, actions: [{ action_id: "ok" }] };

/** What Calendar's events.list and Drive's changes.list give, as Google's JSON has it. */
const calendarItems = [
  {
    kind: "calendar#event",
    id: "ev1",
    status: "confirmed",
    sequence: 0,
    summary: "Standup",
    htmlLink: "https://calendar.google.com/event?eid=ev1",
    iCalUID: "ev1@google.com",
    start: { dateTime: "2026-12-07T09:00:00Z", timeZone: "UTC" },
    attendees: [{ email: "a@example.com", responseStatus: "accepted" }],
    extendedProperties: { private: { myKey: "v" } },
  },
  { id: "ev2", status: "confirmed", sequence: 3, summary: "Moved" },
  { id: "ev3", status: "cancelled" },
];
const driveChanges = [
  {
    kind: "drive#change",
    changeType: "file",
    fileId: "f1",
    removed: false,
    time: "2026-12-06T08:00:00Z",
    file: { id: "f1", name: "notes.txt", mimeType: "text/plain", appProperties: { myKey: "v" } },
  },
  { kind: "drive#change", changeType: "file", fileId: "f2", removed: true },
];

/** What Gmail's users.history.list and Forms' responses.list and forms.get give. */
const gmailHistory = [
  {
    id: "101",
    messages: [{ id: "m1", threadId: "t1" }],
    messagesAdded: [{ message: { id: "m1", threadId: "t1", labelIds: ["INBOX", "UNREAD"] } }],
  },
  { id: "102", labelsRemoved: [{ message: { id: "m1" }, labelIds: ["UNREAD"] }] },
];
const formResponses = [
  { responseId: "r0", lastSubmittedTime: "2026-12-06T07:00:00Z", answers: {} },
  {
    responseId: "r1",
    lastSubmittedTime: "2026-12-06T08:00:00Z",
    respondentEmail: "a@example.com",
    answers: { "7aB3": { questionId: "7aB3", textAnswers: { answers: [{ value: "yes" }] } } },
  },
];
const form = { formId: "form1", info: { title: "Survey", documentTitle: "Survey" }, items: [] };
const pushOf = (attributes: Record<string, string>, data: Record<string, unknown> = {}) => ({
  data,
  attributes,
  publishTime: "2026-12-06T08:00:01Z",
  messageId: "1",
});

const CASES: Record<string, Case> = {
  "github pull_request with commands": {
    kit: ["github", "pull_request", pr],
    ts: githubEvents("pull_request", pr),
  },
  "github issue_comment, CRLF": {
    kit: [
      "github",
      "issue_comment",
      { action: "created", comment: { body: "/lgtm\r\n/retry x\r\n" } },
    ],
    ts: githubEvents("issue_comment", {
      action: "created",
      comment: { body: "/lgtm\r\n/retry x\r\n" },
    }),
  },
  "github pull_request, body null": {
    kit: ["github", "pull_request", { action: "opened", pull_request: { body: null } }],
    ts: githubEvents("pull_request", { action: "opened", pull_request: { body: null } }),
  },
  "github push (no Markdown)": {
    kit: ["github", "push", { ref: "refs/heads/main" }],
    ts: githubEvents("push", { ref: "refs/heads/main" }),
  },
  "slack app_mention (defaults)": {
    kit: ["slack_event", mention],
    ts: slackVerdict(
      JSON.stringify({ type: "event_callback", event_id: "Ev1", event: mention }),
      "application/json",
    ),
  },
  "slack message from a bot, in a thread": {
    kit: ["slack_event", botMessage],
    ts: slackVerdict(
      JSON.stringify({ type: "event_callback", event_id: "Ev2", event: botMessage }),
      "application/json",
    ),
  },
  ...Object.fromEntries(
    Object.entries({ edited, reacted, joined, created }).map(([name, event], i) => [
      `slack ${name} (every field, nested ones too)`,
      {
        kit: ["slack_event", event],
        ts: slackVerdict(
          JSON.stringify({ type: "event_callback", event_id: `EvS${i}`, event }),
          "application/json",
        ),
      },
    ]),
  ),
  "slack slash command": {
    kit: ["slack_slash_command", Object.fromEntries(new URLSearchParams(slashForm))],
    ts: slackVerdict(slashForm, "application/x-www-form-urlencoded"),
  },
  "slack interaction": {
    kit: ["slack_interaction", interaction],
    ts: slackVerdict(
      `payload=${encodeURIComponent(JSON.stringify(interaction))}`,
      "application/x-www-form-urlencoded",
    ),
  },
  "jira issue_created": {
    kit: ["jira", { webhookEvent: "jira:issue_created", issue: { key: "OPS-7" } }],
    ts: jiraVerdict({ webhookEvent: "jira:issue_created", issue: { key: "OPS-7" } }),
  },
  "jira comment_created": {
    kit: ["jira", { webhookEvent: "comment_created", comment: { id: "10" } }],
    ts: jiraVerdict({ webhookEvent: "comment_created", comment: { id: "10" } }),
  },
  "confluence page_created": {
    kit: ["confluence", "created", page],
    ts: atlasTelegramVerdict("confluence", page, "created"),
  },
  "telegram message": {
    kit: ["telegram", update],
    ts: atlasTelegramVerdict("telegram", update),
  },
  "google calendar changes": {
    kit: ["google_calendar", calendarItems],
    ts: calendarEvents(calendarItems),
  },
  "google drive changes": {
    kit: ["google_drive", driveChanges],
    ts: driveEvents(driveChanges),
  },
  "gmail mailbox_change": {
    kit: ["gmail", "ada@example.com", 102, gmailHistory, "2026-12-06T08:00:01Z"],
    ts: [gmailEvent(pushOf({}, { emailAddress: "ada@example.com", historyId: 102 }), gmailHistory)],
  },
  "google forms responses": {
    kit: ["google_forms", "RESPONSES", "form1", { responses: formResponses }],
    ts: [
      formsEvent(pushOf({ eventType: "RESPONSES", formId: "form1" }), { responses: formResponses }),
    ],
  },
  "google forms schema": {
    kit: ["google_forms", "SCHEMA", "form1", { form }],
    ts: [formsEvent(pushOf({ eventType: "SCHEMA", formId: "form1" }), { form })],
  },
  "http JSON request": {
    kit: [
      "http",
      "/hooks/a?x=1&x=2",
      { "content-type": "application/json", authorization: "Bearer t0ken" },
      '{"n":1.0}',
    ],
    ts: httpVerdict("/hooks/a?x=1&x=2", { "content-type": "application/json" }, '{"n":1.0}'),
  },
  "http form request at the inbound URL itself": {
    kit: [
      "http",
      "",
      { "content-type": "application/x-www-form-urlencoded", authorization: "Bearer t0ken" },
      "a=1&a=2&b=",
    ],
    ts: httpVerdict("", { "content-type": "application/x-www-form-urlencoded" }, "a=1&a=2&b="),
  },
};

/** The kit's events for every case, `[{event_type, data}]` each, from one Python process. */
const KIT = `
import json, sys
from workflow_sdk import testing
from workflow_sdk.testing.events import to_wire

def build(kind, *args):
    if kind == "github":
        return testing.github_events(args[0], args[1])
    if kind == "slack_event":
        return [testing.slack_event(args[0])]
    if kind == "slack_slash_command":
        form = dict(args[0])
        return [testing.slack_slash_command(form.pop("command"), form.pop("text"), **form)]
    if kind == "slack_interaction":
        return [testing.slack_interaction(args[0])]
    if kind == "jira":
        return [testing.jira_event(args[0])]
    if kind == "confluence":
        return [testing.confluence_event(args[0], args[1])]
    if kind == "telegram":
        return [testing.telegram_event(args[0])]
    if kind == "google_calendar":
        return testing.google_calendar_events(args[0])
    if kind == "google_drive":
        return testing.google_drive_events(args[0])
    if kind == "gmail":
        return [testing.gmail_event(*args[:3], publish_time=args[3])]
    if kind == "google_forms":
        return [testing.google_forms_event(args[0], args[1], publish_time="2026-12-06T08:00:01Z", **args[2])]
    path, headers, body = args
    return [testing.http_event("POST", path, headers, body)]

out = {}
for name, args in json.load(sys.stdin).items():
    out[name] = [{k: to_wire(e)[k] for k in ("event_type", "data")} for e in build(*args)]
print(json.dumps(out))
`;

describe("connection events: the inbound side and the testing kit agree", () => {
  let kit: Record<string, unknown>;
  beforeAll(async () => {
    const input = JSON.stringify(
      Object.fromEntries(Object.entries(CASES).map(([k, c]) => [k, c.kit])),
    );
    const r = await execa(await testPython(), ["-c", KIT], { input });
    kit = JSON.parse(r.stdout);
  }, 180_000);

  for (const [name, c] of Object.entries(CASES)) {
    it(name, () => {
      const ts = JSON.parse(
        JSON.stringify(c.ts.map((e) => ({ event_type: e.event_type, data: e.data }))),
      );
      expect(kit[name]).toEqual(ts);
    });
  }

  it("the cases cover every event kind the inbound side makes", () => {
    const kinds = new Set(Object.values(CASES).flatMap((c) => c.ts.map((e) => e.event_type)));
    expect([...kinds].sort()).toEqual(
      [
        "app_mention",
        "channel_created",
        "comment_created",
        "event_created",
        "event_deleted",
        "event_updated",
        "file_change",
        "file_remove",
        "interaction",
        "issue_created",
        "issue_comment",
        "mailbox_change",
        "member_joined_channel",
        "message",
        "page_created",
        "post",
        "pull_request",
        "push",
        "reaction_added",
        "responses",
        "schema",
        "slash_command",
      ].sort(),
    );
  });
});
