import { generateKeyPairSync, type JsonWebKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signJwt } from "../../test/support/google-pubsub.ts";
import { checkGoogleOidc, googleKeys, type KeySet } from "./google-oidc.ts";
import { pubsubMessage } from "./google-pubsub.ts";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const keys: KeySet = {
  key: async (kid) =>
    kid === "k1" ? (publicKey.export({ format: "jwk" }) as JsonWebKey) : undefined,
};
const NOW = 1_800_000_000_000;
const AUD = "https://hooks.example.com/google/pubsub/gmail";
const SA = "push@proj.iam.gserviceaccount.com";
const claims = (over: Record<string, unknown> = {}) => ({
  iss: "accounts.google.com",
  aud: AUD,
  iat: NOW / 1000 - 10,
  exp: NOW / 1000 + 3600,
  email: SA,
  email_verified: true,
  ...over,
});
const check = (token: string, email?: string) =>
  checkGoogleOidc(`Bearer ${token}`, keys, { audience: AUD, email, now: NOW });

describe("checkGoogleOidc: the OIDC token of a Pub/Sub push", () => {
  it("takes Google's token for the audience, with the service account when one is set", async () => {
    expect(await check(signJwt(claims(), privateKey, "k1"))).toBeNull();
    expect(await check(signJwt(claims(), privateKey, "k1"), SA)).toBeNull();
  });

  it("refuses another service account, an unverified email, a future iat, an unknown key, alg none", async () => {
    const other = signJwt(claims({ email: "x@evil.example.com" }), privateKey, "k1");
    expect(await check(other, SA)).toContain("service account");
    const unverified = signJwt(claims({ email_verified: false }), privateKey, "k1");
    expect(await check(unverified, SA)).toContain("service account");
    const future = signJwt(claims({ iat: NOW / 1000 + 600 }), privateKey, "k1");
    expect(await check(future)).toContain("future");
    expect(await check(signJwt(claims(), privateKey, "k2"))).toContain("Google's keys");
    const [, body] = signJwt(claims(), privateKey, "k1").split(".");
    const none = `${Buffer.from('{"alg":"none","kid":"k1"}').toString("base64url")}.${body}.x`;
    expect(await check(none)).toContain("RS256");
    expect(await checkGoogleOidc("Basic abc", keys, { audience: AUD, now: NOW })).toContain(
      "Bearer",
    );
  });

  it("fetches the keys once, and again for a key id it does not know (at most once a minute)", async () => {
    let fetched = 0;
    const jwk = { ...(publicKey.export({ format: "jwk" }) as JsonWebKey), kid: "k1" };
    const fetcher = (async () => {
      fetched += 1;
      return new Response(JSON.stringify({ keys: [jwk] }));
    }) as typeof fetch;
    const set = googleKeys("https://keys.example.com/certs", fetcher);
    expect(await set.key("k1")).toMatchObject({ kty: "RSA" });
    expect(await set.key("k1")).toMatchObject({ kty: "RSA" });
    expect(await set.key("k9")).toBeUndefined();
    expect(fetched).toBe(1);
  });
});

describe("pubsubMessage: a push body", () => {
  it("reads the wrapped form: base64 JSON data, attributes, publish time", () => {
    const data = Buffer.from('{"emailAddress":"a@example.com","historyId":7}').toString("base64");
    const body = JSON.stringify({
      message: {
        data,
        attributes: { watchId: "w1" },
        publishTime: "2026-12-06T08:00:00Z",
        messageId: "9",
      },
    });
    const m = pubsubMessage(new TextEncoder().encode(body), new Headers());
    expect(m).toEqual({
      data: { emailAddress: "a@example.com", historyId: 7 },
      attributes: { watchId: "w1" },
      publishTime: "2026-12-06T08:00:00Z",
      messageId: "9",
    });
  });

  it("reads the unwrapped form: the data as the body, the attributes as headers", () => {
    const headers = new Headers({
      Eventtype: "RESPONSES",
      Formid: "form1",
      Watchid: "w1",
      "X-Goog-Pubsub-Publish-Time": "2026-12-06T08:00:00Z",
    });
    const m = pubsubMessage(new TextEncoder().encode(""), headers);
    expect(m?.attributes).toEqual({ eventType: "RESPONSES", formId: "form1", watchId: "w1" });
    expect(pubsubMessage(new TextEncoder().encode("not json"), new Headers())).toBeNull();
  });
});
