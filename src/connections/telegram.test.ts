import { describe, expect, it } from "vitest";
import { telegramEventType, verifyTelegram } from "./telegram.ts";

const req = (headers: Record<string, string>, body: unknown) => ({
  method: "POST",
  headers: new Headers({ "content-type": "application/json", ...headers }),
  body: new TextEncoder().encode(JSON.stringify(body)),
  now: Date.now(),
});
const vars = (secret?: string) => (n: string) => (n === "SecretToken" ? secret : undefined);
const header = "x-telegram-bot-api-secret-token";

describe("verifyTelegram", () => {
  it("takes an update whose header is the SecretToken: AutoKitteh's type, update_id as its delivery", () => {
    const v = verifyTelegram(
      req({ [header]: "s3" }, { update_id: 5, edited_message: {} }),
      vars("s3"),
    );
    expect(v).toEqual({
      kind: "events",
      delivery: "5",
      events: [{ event_type: "edited_message", data: { update_id: 5, edited_message: {} } }],
    });
  });
  it("refuses without a SecretToken (403), without the header or with another (401)", () => {
    expect(verifyTelegram(req({ [header]: "s3" }, {}), vars())).toMatchObject({ status: 403 });
    expect(verifyTelegram(req({}, {}), vars("s3"))).toMatchObject({ status: 401 });
    expect(verifyTelegram(req({ [header]: "s4" }, {}), vars("s3"))).toMatchObject({ status: 401 });
  });
  it("names an update of no known field as AutoKitteh does", () => {
    expect(telegramEventType({ update_id: 1, business_message: {} })).toBe(
      "unknown telegram event",
    );
    expect(telegramEventType({ update_id: 1, poll: {}, poll_answer: {} })).toBe("poll");
  });
});
