import { describe, expect, it } from "vitest";
import { verifyHttp } from "./http.ts";
import type { InboundRequest } from "./verdict.ts";

// The Standard Webhooks specification's example (secret, message id, timestamp, payload, signature).
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TS = "1614265330";
const BODY = '{"test": 2432232314}';
const SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

const vars = (values: Record<string, string>) => (name: string) => values[name];
const req = (headers: Record<string, string>, now = Number(TS) * 1000): InboundRequest => ({
  method: "POST",
  headers: new Headers(headers),
  body: Buffer.from(BODY),
  now,
});
const signed = { "webhook-id": ID, "webhook-timestamp": TS, "webhook-signature": SIGNATURE };
const DATA = { method: "POST" };

describe("http connections", () => {
  it("accepts the specification's example, among other signatures, keyed by webhook-id", () => {
    const v = verifyHttp(
      req({ ...signed, "webhook-signature": `v1,AAAA ${SIGNATURE}` }),
      vars({ signing_secret: SECRET }),
      DATA,
    );
    expect(v).toEqual({
      kind: "events",
      delivery: ID,
      events: [{ event_type: "post", data: DATA }],
    });
  });

  it("refuses a wrong signature, a stale timestamp, missing headers", () => {
    const s = vars({ signing_secret: SECRET });
    const wrong = { ...signed, "webhook-signature": SIGNATURE.replace("g0h", "g1h") };
    expect(verifyHttp(req(wrong), s, DATA)).toMatchObject({ status: 401 });
    expect(verifyHttp(req(signed, (Number(TS) + 301) * 1000), s, DATA)).toMatchObject({
      status: 401,
    });
    expect(verifyHttp(req({ "webhook-id": ID }), s, DATA)).toMatchObject({ status: 401 });
  });

  it("compares each whole signature: its last character changed, or cut short, is refused", () => {
    const s = vars({ signing_secret: SECRET });
    const flipped = `${SIGNATURE.slice(0, -2)}${SIGNATURE.at(-2) === "E" ? "F" : "E"}=`;
    for (const signature of [flipped, SIGNATURE.slice(0, 20), "v1,"]) {
      expect(
        verifyHttp(req({ ...signed, "webhook-signature": signature }), s, DATA),
        `the signature "${signature}" must be refused`,
      ).toMatchObject({ kind: "refuse", status: 401 });
    }
  });

  it("wants exactly the Authorization set in auth; with both set, both", () => {
    const auth = vars({ auth: "Bearer t0ken" });
    expect(verifyHttp(req({ authorization: "Bearer t0ken" }), auth, DATA).kind).toBe("events");
    expect(verifyHttp(req({ authorization: "Bearer t0ken2" }), auth, DATA)).toMatchObject({
      status: 401,
    });
    expect(verifyHttp(req({ authorization: "bearer t0ken" }), auth, DATA)).toMatchObject({
      status: 401,
    });
    expect(verifyHttp(req({}), auth, DATA)).toMatchObject({ status: 401 });
    const both = vars({ auth: "Basic dTpw", signing_secret: SECRET });
    expect(verifyHttp(req({ ...signed, authorization: "Basic dTpw" }), both, DATA).kind).toBe(
      "events",
    );
    expect(verifyHttp(req({ authorization: "Basic dTpw" }), both, DATA)).toMatchObject({
      status: 401,
    });
    expect(verifyHttp(req(signed), both, DATA)).toMatchObject({ status: 401 });
  });

  it("refuses everything when neither is set", () => {
    expect(verifyHttp(req(signed), vars({}), DATA)).toMatchObject({ kind: "refuse", status: 403 });
  });
});
