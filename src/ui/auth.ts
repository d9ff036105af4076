import { createHmac, randomBytes } from "node:crypto";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { HooklineError } from "../errors.ts";
import { requestOrigin } from "../routes/forwarded.ts";
import { sameSecret } from "../secrets.ts";

/** The UI's session cookie: `<nonce>.<expiry ms>.<mac>`. */
export const COOKIE = "hookline_ui";
/** How long a sign-in lasts. */
const SIGN_IN_MS = 12 * 60 * 60 * 1000;

export interface UiAuth {
  /** True outside dev mode: pages need a signed-in cookie. */
  readonly required: boolean;
  /** The cookie's nonce when the request carries a valid cookie, else null. */
  nonce(c: Context): string | null;
  /** Checks a token typed into the sign-in form. */
  tokenMatches(token: string): boolean;
  /** Sets a fresh cookie and returns its nonce. */
  issue(c: Context): string;
  clear(c: Context): void;
  /** The CSRF token of forms for this cookie. */
  csrf(nonce: string): string;
  /** Refuses (403) a request whose Origin (else Referer) is not this host. */
  checkOrigin(c: Context): void;
  /** Refuses (403) a state-changing request from another origin or without this cookie's token. */
  checkPost(c: Context, nonce: string | null, given: string | undefined): void;
}

/**
 * Sign-in and CSRF for the UI. The cookie is HttpOnly and SameSite=Strict, signed with a key
 * derived from the API token (every instance with the same token accepts it); in dev mode (no
 * token) the key is random per process and any visitor gets a cookie, so forms still carry a
 * CSRF token tied to it.
 * @example const auth = uiAuth("s3cret"); auth.tokenMatches("s3cret") // true
 */
export function uiAuth(apiToken: string | undefined): UiAuth {
  const key = apiToken
    ? createHmac("sha256", apiToken).update("hookline-ui-cookie").digest()
    : randomBytes(32);
  const mac = (what: string) => createHmac("sha256", key).update(what).digest("base64url");

  return {
    required: apiToken !== undefined,
    nonce(c) {
      const value = getCookie(c, COOKIE) ?? "";
      const [nonce, exp, sig] = value.split(".");
      if (!nonce || !exp || !sig || !/^\d+$/.test(exp)) return null;
      if (!sameSecret(sig, mac(`cookie:${nonce}.${exp}`))) return null;
      return Number(exp) > Date.now() ? nonce : null;
    },
    tokenMatches: (token) => apiToken !== undefined && sameSecret(token, apiToken),
    issue(c) {
      const nonce = randomBytes(18).toString("base64url");
      const exp = Date.now() + SIGN_IN_MS;
      setCookie(c, COOKIE, `${nonce}.${exp}.${mac(`cookie:${nonce}.${exp}`)}`, {
        path: "/ui",
        httpOnly: true,
        sameSite: "Strict",
        secure: requestOrigin(c).startsWith("https:"),
        maxAge: SIGN_IN_MS / 1000,
      });
      return nonce;
    },
    clear(c) {
      setCookie(c, COOKIE, "", { path: "/ui", httpOnly: true, sameSite: "Strict", maxAge: 0 });
    },
    csrf: (nonce) => mac(`csrf:${nonce}`),
    checkOrigin(c) {
      if (!sameOrigin(c)) throw new HooklineError("forbidden", "cross-origin request refused");
    },
    checkPost(c, nonce, given) {
      this.checkOrigin(c);
      if (!nonce || !given || !sameSecret(given, mac(`csrf:${nonce}`))) {
        throw new HooklineError("forbidden", "the form expired or did not come from this page");
      }
    },
  };
}

/**
 * The request's Origin (else its Referer) names this server: its Host, or the
 * X-Forwarded-Host a proxy in front set (a cross-site form cannot set either header). A
 * browser always sends Origin or Referer on a form POST; a request with neither is refused.
 */
function sameOrigin(c: Context): boolean {
  const hosts = [c.req.header("host") ?? new URL(c.req.url).host];
  const forwarded = c.req.header("x-forwarded-host");
  if (forwarded) hosts.push(...forwarded.split(",").map((h) => h.trim()));
  const origin = c.req.header("origin");
  const from = origin && origin !== "null" ? origin : c.req.header("referer");
  if (!from) return false;
  try {
    // The host, not the scheme: behind a TLS proxy this server sees http.
    return hosts.includes(new URL(from).host);
  } catch {
    return false;
  }
}
