import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifySlack } from "./slack.ts";
import type { InboundRequest } from "./verdict.ts";

// Slack's documentation ("Verifying requests from Slack") signs this slash command request.
const DOC_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const DOC_TIMESTAMP = "1531420618";
const DOC_BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const DOC_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
const FORM = "application/x-www-form-urlencoded";

const vars = (values: Record<string, string>) => (name: string) => values[name];
const at = (seconds: string, body: string, headers: Record<string, string>): InboundRequest => ({
  method: "POST",
  headers: new Headers(headers),
  body: Buffer.from(body),
  now: Number(seconds) * 1000,
});

describe("slack: signatures", () => {
  const doc = (extra: Record<string, string> = {}, now = DOC_TIMESTAMP) =>
    at(now, DOC_BODY, {
      "x-slack-request-timestamp": DOC_TIMESTAMP,
      "x-slack-signature": DOC_SIGNATURE,
      "content-type": FORM,
      ...extra,
    });

  it("accepts the documentation's example as a slash_command", () => {
    const v = verifySlack(doc(), vars({ signing_secret: DOC_SECRET }));
    expect(v).toMatchObject({
      kind: "events",
      // One invocation, whatever retries of it come: its trigger_id.
      delivery: "trigger_id:398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
      events: [
        {
          event_type: "slash_command",
          data: { command: "/webhook-collect", user_id: "U2CERLKJA", text: "" },
        },
      ],
    });
    // AutoKitteh's name for the secret works too.
    expect(verifySlack(doc(), vars({ private_signing_secret: DOC_SECRET })).kind).toBe("events");
  });

  it("refuses a wrong secret, a stale or missing timestamp, a missing signature, no secret", () => {
    expect(verifySlack(doc(), vars({ signing_secret: "other" }))).toMatchObject({ status: 401 });
    const late = String(Number(DOC_TIMESTAMP) + 301);
    expect(verifySlack(doc({}, late), vars({ signing_secret: DOC_SECRET }))).toMatchObject({
      status: 401,
      detail: expect.stringMatching(/5 minutes/),
    });
    const within = String(Number(DOC_TIMESTAMP) + 299);
    expect(verifySlack(doc({}, within), vars({ signing_secret: DOC_SECRET })).kind).toBe("events");
    const missing = at(DOC_TIMESTAMP, DOC_BODY, { "x-slack-signature": DOC_SIGNATURE });
    expect(verifySlack(missing, vars({ signing_secret: DOC_SECRET }))).toMatchObject({
      status: 401,
    });
    expect(verifySlack(doc(), vars({}))).toMatchObject({ status: 403 });
  });

  it("compares the whole signature: its last digit changed, or cut short, is refused", () => {
    const flipped = DOC_SIGNATURE.slice(0, -1) + (DOC_SIGNATURE.endsWith("0") ? "1" : "0");
    for (const signature of [flipped, DOC_SIGNATURE.slice(0, 35), "v0="]) {
      expect(
        verifySlack(doc({ "x-slack-signature": signature }), vars({ signing_secret: DOC_SECRET })),
        `the signature "${signature}" must be refused`,
      ).toMatchObject({ kind: "refuse", status: 401 });
    }
  });
});

describe("slack: what a request becomes", () => {
  const now = "1700000000";
  const send = (body: string, type = "application/json") =>
    verifySlack(
      at(now, body, {
        "x-slack-request-timestamp": now,
        "x-slack-signature": `v0=${createHmac("sha256", "k").update(`v0:${now}:${body}`).digest("hex")}`,
        "content-type": type,
      }),
      vars({ signing_secret: "k" }),
    );

  it("answers url_verification with its challenge", () => {
    expect(send('{"type":"url_verification","challenge":"c-42"}')).toEqual({
      kind: "answer",
      status: 200,
      body: '{"challenge":"c-42"}',
      contentType: "application/json",
    });
  });

  it("hands the inner event over with AutoKitteh's defaults, keyed by event_id", () => {
    const envelope = {
      type: "event_callback",
      event_id: "Ev1",
      authorizations: [{ user_id: "UBOT" }],
      event: { type: "app_mention", user: "U1", text: "hi", ts: "1.2" },
    };
    expect(send(JSON.stringify(envelope))).toEqual({
      kind: "events",
      delivery: "Ev1",
      events: [
        {
          event_type: "app_mention",
          data: {
            type: "app_mention",
            user: "U1",
            text: "hi",
            ts: "1.2",
            subtype: "",
            thread_ts: "",
            bot_id: "",
            team: "",
            channel: "",
            event_ts: "",
            blocks: [],
            client_msg_id: "",
          },
        },
      ],
    });
    const own = { ...envelope, event: { ...envelope.event, user: "UBOT" } };
    expect(send(JSON.stringify(own))).toMatchObject({ kind: "answer", status: 200, body: "" });
  });

  it("gives every field of AutoKitteh's struct its zero value, nested ones too: an edit of an unthreaded message", () => {
    // What Slack sends for an edited message that was never in a thread: no thread_ts anywhere.
    const edit = {
      type: "message",
      subtype: "message_changed",
      hidden: true,
      channel: "C1",
      ts: "2.0",
      event_ts: "2.0",
      message: {
        type: "message",
        user: "U1",
        text: "fixed",
        ts: "1.0",
        edited: { user: "U1", ts: "2.0" },
      },
      previous_message: { type: "message", user: "U1", text: "fixd", ts: "1.0" },
    };
    const verdict = send(JSON.stringify({ type: "event_callback", event_id: "Ev9", event: edit }));
    if (verdict.kind !== "events") throw new Error(JSON.stringify(verdict));
    const data = verdict.events[0]!.data as Record<string, Record<string, unknown>>;
    expect(data.message).toMatchObject({
      thread_ts: "",
      text: "fixed",
      bot_id: "",
      reply_count: 0,
    });
    expect(data.message!.edited).toEqual({ user: "U1", ts: "2.0" });
    expect(data.message!.bot_profile).toBeNull(); // a struct held by pointer: None when absent
    expect(data.message!.reactions).toEqual([]);
    expect(data.previous_message).toMatchObject({ thread_ts: "", edited: null, text: "fixd" });
    expect(data).toMatchObject({
      thread_ts: "",
      user: "",
      root: null,
      hidden: true,
      channel: "C1",
    });
    // Reactions: the item's fields too.
    const reaction = {
      type: "reaction_added",
      user: "U1",
      reaction: "tada",
      item: { type: "message" },
    };
    const r = send(JSON.stringify({ type: "event_callback", event_id: "Ev10", event: reaction }));
    if (r.kind !== "events") throw new Error(JSON.stringify(r));
    expect(r.events[0]!.data).toMatchObject({
      item: { type: "message", channel: "", ts: "", file: "", file_comment: "" },
      item_user: "",
      event_ts: "",
    });
  });

  it("makes interactions of payload= forms, keyed by trigger_id; refuses other forms and types", () => {
    const payload = {
      type: "block_actions",
      user: { id: "U1" },
      trigger_id: "13345224609.8534564800",
    };
    const form = (p: unknown) => send(`payload=${encodeURIComponent(JSON.stringify(p))}`, FORM);
    expect(form(payload)).toEqual({
      kind: "events",
      delivery: "trigger_id:13345224609.8534564800",
      events: [{ event_type: "interaction", data: payload }],
    });
    // No trigger_id (view_closed): nothing to know a repeat by.
    const closed = { type: "view_closed", user: { id: "U1" } };
    expect(form(closed)).toMatchObject({ kind: "events", delivery: null });
    expect(form({ ...closed, trigger_id: "" })).toMatchObject({ kind: "events", delivery: null });
    expect(send("a=b", FORM)).toMatchObject({ kind: "refuse", status: 400 });
    expect(send("{}", "text/plain")).toMatchObject({ kind: "refuse", status: 400 });
  });
});
