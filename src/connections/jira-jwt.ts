import { sameSecret } from "../secrets.ts";
import { hmac, isObject, parseJson } from "./verdict.ts";

/** Clock skew allowed on a JWT's `exp`, `nbf` and `iat`, in seconds. */
export const JWT_LEEWAY_S = 60;

/** A JWT longer than this is not parsed (Atlassian's are a few hundred characters). */
const MAX_JWT = 8192;

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** A base64url segment's JSON object, or undefined. */
function segment(text: string): Record<string, unknown> | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const value = parseJson(Buffer.from(text, "base64url").toString("utf8"));
  return isObject(value) ? value : undefined;
}

/** Whether a claim that must be a NumericDate (seconds) is one, when present. */
const numeric = (v: unknown) => v === undefined || (typeof v === "number" && Number.isFinite(v));

/** The problem with a JWT's time claims at `now` (epoch ms), or null. */
function timeProblem(claims: Record<string, unknown>, now: number): string | null {
  const { exp, nbf, iat } = claims;
  if (!numeric(exp) || !numeric(nbf) || !numeric(iat)) {
    return "the JWT's exp, nbf or iat is not a number of seconds";
  }
  const seconds = now / 1000;
  const at = (s: number) => new Date(s * 1000).toISOString();
  if (typeof exp === "number" && seconds > exp + JWT_LEEWAY_S) {
    return `the JWT expired at ${at(exp)}`;
  }
  if (typeof nbf === "number" && seconds < nbf - JWT_LEEWAY_S) {
    return `the JWT is not valid before ${at(nbf)}`;
  }
  if (typeof iat === "number" && seconds < iat - JWT_LEEWAY_S) {
    return `the JWT is issued in the future (${at(iat)})`;
  }
  return null;
}

/**
 * Checks the JWT Atlassian puts in `Authorization: Bearer` on a delivery of a dynamic webhook
 * registered by an OAuth 2.0 app: header `alg` must be `HS256` (any other, `none` included, is
 * refused), the signature HMAC-SHA256 of `<header>.<claims>` under the app's client secret
 * (compared in constant time), and the time claims when present: `exp` not past, `nbf` and
 * `iat` not ahead, each with `JWT_LEEWAY_S` of skew (AutoKitteh checks the same: signature, then
 * `exp`/`nbf` when present). The problem in words, never the token or the secret; null when it
 * holds.
 * @example verifyAtlassianJwt(token, "client-s3cret", Date.now()) // null, or "the JWT expired at …"
 */
export function verifyAtlassianJwt(token: string, secret: string, now: number): string | null {
  if (token.length > MAX_JWT) return "the JWT is too long";
  const parts = token.split(".");
  if (parts.length !== 3) return "the Bearer token is not a JWT";
  const [head, body, signature] = parts as [string, string, string];
  const header = segment(head);
  const claims = segment(body);
  if (!header || !claims) return "the JWT's header or claims are not base64url JSON objects";
  if (header.alg !== "HS256") {
    return `the JWT's alg is ${JSON.stringify(header.alg ?? null)}: Atlassian signs with HS256`;
  }
  const expected = hmac(secret, `${head}.${body}`).toString("base64url");
  if (!BASE64URL.test(signature) || !sameSecret(signature, expected)) {
    return "the JWT's signature does not match the client secret";
  }
  return timeProblem(claims, now);
}

/**
 * Signs claims as Atlassian does (HS256), for the tests' deliveries and stand-ins.
 * @example signAtlassianJwt({ exp: Math.floor(Date.now() / 1000) + 60 }, "client-s3cret")
 */
export function signAtlassianJwt(claims: Record<string, unknown>, secret: string): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const signed = `${enc({ alg: "HS256", typ: "JWT" })}.${enc(claims)}`;
  return `${signed}.${hmac(secret, signed).toString("base64url")}`;
}
