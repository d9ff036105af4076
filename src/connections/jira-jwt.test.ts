import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { verifyJira } from "./jira.ts";
import { JWT_LEEWAY_S, signAtlassianJwt, verifyAtlassianJwt } from "./jira-jwt.ts";
import type { InboundRequest } from "./verdict.ts";

/**
 * The JWT Atlassian puts in `Authorization: Bearer` on a dynamic webhook's delivery (an OAuth
 * 2.0 app's): HS256 under the app's client secret, its time claims checked; and `verifyJira`
 * taking it beside the admin webhook's X-Hub-Signature.
 */
const SECRET = "jira-client-s3cret";
const NOW = 1_800_000_000_000;
const s = NOW / 1000;
const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
/** A JWT with any header, signed HS256 under `secret` whatever the header says. */
const forge = (header: unknown, claims: unknown, secret = SECRET) => {
  const signed = `${enc(header)}.${enc(claims)}`;
  return `${signed}.${createHmac("sha256", secret).update(signed).digest("base64url")}`;
};

describe("verifyAtlassianJwt", () => {
  it("takes an HS256 JWT signed with the client secret, within its times", () => {
    const claims = { iss: "jira", iat: s - 10, exp: s + 170, context: {} };
    expect(verifyAtlassianJwt(signAtlassianJwt(claims, SECRET), SECRET, NOW)).toBeNull();
    // No time claims at all: taken, as AutoKitteh takes it (exp is checked when present).
    expect(verifyAtlassianJwt(signAtlassianJwt({}, SECRET), SECRET, NOW)).toBeNull();
    // Within the leeway of a slow clock.
    const late = signAtlassianJwt({ exp: s - JWT_LEEWAY_S + 1 }, SECRET);
    expect(verifyAtlassianJwt(late, SECRET, NOW)).toBeNull();
  });

  it("refuses another secret, a changed claim, another alg, an expired or early token, and junk", () => {
    const good = signAtlassianJwt({ exp: s + 60 }, SECRET);
    const [h, , sig] = good.split(".");
    const cases: [string, string][] = [
      [signAtlassianJwt({ exp: s + 60 }, "other"), "signature does not match"],
      [`${h}.${enc({ exp: s + 6000 })}.${sig}`, "signature does not match"],
      [`${good.slice(0, -2)}`, "signature does not match"],
      [forge({ alg: "none" }, { exp: s + 60 }), 'alg is "none"'],
      [forge({ alg: "HS512" }, { exp: s + 60 }), 'alg is "HS512"'],
      [forge({ typ: "JWT" }, {}), "alg is null"],
      [signAtlassianJwt({ exp: s - JWT_LEEWAY_S - 1 }, SECRET), "expired at"],
      [signAtlassianJwt({ nbf: s + 600 }, SECRET), "not valid before"],
      [signAtlassianJwt({ iat: s + 600 }, SECRET), "issued in the future"],
      [signAtlassianJwt({ exp: "tomorrow" }, SECRET), "not a number"],
      ["abc.def", "not a JWT"],
      [`${enc([1])}.${enc({})}.x`, "not base64url JSON objects"],
      [`a.${"b".repeat(9000)}.c`, "too long"],
    ];
    for (const [token, problem] of cases) {
      expect(verifyAtlassianJwt(token, SECRET, NOW)).toContain(problem);
    }
  });
});

const req = (body: string, headers: Record<string, string>): InboundRequest => ({
  method: "POST",
  headers: new Headers({ "content-type": "application/json", ...headers }),
  body: Buffer.from(body),
  now: NOW,
});
const vars = (values: Record<string, string>) => (name: string) => values[name] || undefined;
const body = JSON.stringify({ webhookEvent: "comment_created", comment: { body: "hi" } });
const bearer = (claims = { exp: s + 60 }, secret = SECRET) => ({
  authorization: `Bearer ${signAtlassianJwt(claims, secret)}`,
});

describe("verifyJira with a Bearer JWT (a webhook registered with the OAuth token)", () => {
  afterEach(() => {
    delete process.env.JIRA_CLIENT_SECRET;
  });

  it("takes a delivery signed with private_client_secret, else JIRA_CLIENT_SECRET", () => {
    const v = verifyJira(req(body, bearer()), vars({ private_client_secret: SECRET }));
    expect(v).toMatchObject({ kind: "events", events: [{ event_type: "comment_created" }] });
    process.env.JIRA_CLIENT_SECRET = SECRET;
    expect(verifyJira(req(body, bearer()), vars({})).kind).toBe("events");
    // The connection's own secret wins over the service's.
    const own = vars({ private_client_secret: "the-connection's" });
    expect(verifyJira(req(body, bearer()), own)).toMatchObject({ status: 401 });
  });

  it("refuses a forged or expired JWT, another scheme, and a JWT with no client secret set", () => {
    const withSecret = vars({ private_client_secret: SECRET, webhook_secret: "admin" });
    const cases: [Record<string, string>, ReturnType<typeof vars>, number, string][] = [
      [bearer({ exp: s + 60 }, "forged"), withSecret, 401, "signature does not match"],
      [bearer({ exp: s - 3600 }), withSecret, 401, "expired"],
      [{ authorization: "Basic dTpw" }, withSecret, 401, "not a Bearer JWT"],
      [{ authorization: "Bearer " }, withSecret, 401, "not a Bearer JWT"],
      [bearer(), vars({ webhook_secret: "admin" }), 403, "no OAuth client secret"],
    ];
    for (const [headers, v, status, detail] of cases) {
      expect(verifyJira(req(body, headers), v)).toMatchObject({
        kind: "refuse",
        status,
        detail: expect.stringContaining(detail),
      });
    }
  });

  it("uses X-Hub-Signature when there is no Authorization, the JWT when there is", () => {
    const hub = `sha256=${createHmac("sha256", "admin").update(body).digest("hex")}`;
    const both = vars({ private_client_secret: SECRET, webhook_secret: "admin" });
    expect(verifyJira(req(body, { "x-hub-signature": hub }), both).kind).toBe("events");
    // A good admin signature does not save a bad JWT: the Authorization header decides.
    const forged = { ...bearer({ exp: s + 60 }, "forged"), "x-hub-signature": hub };
    expect(verifyJira(req(body, forged), both)).toMatchObject({ status: 401 });
    // Without a webhook_secret, an unsigned request is refused as before.
    expect(verifyJira(req(body, {}), vars({ private_client_secret: SECRET }))).toMatchObject({
      status: 403,
    });
  });
});
