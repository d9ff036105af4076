import { createPublicKey, type JsonWebKey, verify } from "node:crypto";
import { isObject, parseJson } from "./verdict.ts";

/** Where Google publishes the keys its OIDC tokens are signed with (JWKS). */
export const GOOGLE_JWKS_URL = "https://www.googleapis.com/oauth2/v3/certs";
/** The issuers Google's OIDC tokens name. */
const ISSUERS = new Set(["accounts.google.com", "https://accounts.google.com"]);
/** How long fetched keys are used before they are fetched again. */
const KEYS_TTL_MS = 3600_000;
/** Clock skew allowed on `exp` and `iat`. */
const SKEW_MS = 60_000;

/** What a Pub/Sub push's token must say. */
export interface OidcExpectation {
  /** The audience the push subscription was given (its `aud` claim). */
  audience: string;
  /** The service account the subscription pushes as, when one is required (`email` claim). */
  email?: string;
  /** Epoch ms. */
  now: number;
}

/** The JSON Web Keys by key id, fetched from a JWKS URL and kept for an hour. */
export interface KeySet {
  key(kid: string): Promise<JsonWebKey | undefined>;
}

/**
 * Google's signing keys from `url` (a JWKS document), fetched when first needed, again after
 * an hour, and again (at most once a minute) when a token names a key id not among them.
 * @example const keys = googleKeys(GOOGLE_JWKS_URL); await keys.key("abc…")
 */
export function googleKeys(url: string, fetcher: typeof fetch = fetch): KeySet {
  let keys = new Map<string, JsonWebKey>();
  let fetchedAt = Number.NEGATIVE_INFINITY;
  const load = async () => {
    const res = await fetcher(url, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`Google's keys (${url}) answered ${res.status}`);
    const doc = (await res.json()) as { keys?: JsonWebKey[] };
    keys = new Map((doc.keys ?? []).filter((k) => k.kid).map((k) => [String(k.kid), k]));
    fetchedAt = Date.now();
  };
  return {
    async key(kid) {
      const age = Date.now() - fetchedAt;
      if (age > KEYS_TTL_MS || (!keys.has(kid) && age > SKEW_MS)) await load();
      return keys.get(kid);
    },
  };
}

const part = (text: string | undefined): Record<string, unknown> | null => {
  if (!text) return null;
  const value = parseJson(Buffer.from(text, "base64url").toString("utf8"));
  return isObject(value) ? value : null;
};

/** The claims' problem in words, or null when `iss`, `aud`, `exp`, `iat` and `email` hold. */
function claimsProblem(claims: Record<string, unknown>, want: OidcExpectation): string | null {
  if (!ISSUERS.has(String(claims.iss))) return "the token's issuer is not accounts.google.com";
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(want.audience)) return "the token's audience is not this service's";
  if (typeof claims.exp !== "number" || claims.exp * 1000 + SKEW_MS < want.now) {
    return "the token has expired";
  }
  if (typeof claims.iat === "number" && claims.iat * 1000 - SKEW_MS > want.now) {
    return "the token was issued in the future";
  }
  if (want.email && (claims.email !== want.email || claims.email_verified !== true)) {
    return "the token is not the configured service account's";
  }
  return null;
}

/**
 * Checks the OIDC token Google signs on a Pub/Sub push (`Authorization: Bearer <JWT>`):
 * RS256, signed by one of Google's keys (`kid`), issued by accounts.google.com for the
 * expected audience, not expired, and (when one is set) the push's service account's. The
 * problem in words, or null when it holds. Never throws for a bad token; a key set that
 * cannot be fetched throws.
 * @example await checkGoogleOidc(header, keys, { audience, now: Date.now() }) // null
 */
export async function checkGoogleOidc(
  authorization: string | null,
  keys: KeySet,
  want: OidcExpectation,
): Promise<string | null> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token) return "Authorization: Bearer <Google's OIDC token> is missing";
  const [h, p, s] = token.split(".");
  const header = part(h);
  const claims = part(p);
  if (!header || !claims || !s) return "the bearer token is not a JWT";
  if (header.alg !== "RS256") return "the token is not signed with RS256";
  const jwk = await keys.key(String(header.kid ?? ""));
  if (jwk?.kty !== "RSA") return "the token is not signed by one of Google's keys";
  const signed = verify(
    "RSA-SHA256",
    Buffer.from(`${h}.${p}`),
    createPublicKey({ key: jwk, format: "jwk" }),
    Buffer.from(s, "base64url"),
  );
  if (!signed) return "the token's signature does not hold";
  return claimsProblem(claims, want);
}
