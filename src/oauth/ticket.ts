import { createHmac } from "node:crypto";
import { sameSecret } from "../secrets.ts";
import { STATE_TTL_MS } from "./states.ts";

/**
 * Start links carry a ticket outside dev mode: a browser cannot send the API token, so the CLI
 * (with the token) and the signed-in web UI hand out links signed with a key derived from it,
 * good for one connection and 10 minutes. Every instance with the same token accepts them.
 */
function mac(apiToken: string, what: string): string {
  const key = createHmac("sha256", apiToken).update("hookline-oauth-start").digest();
  return createHmac("sha256", key).update(what).digest("base64url");
}

/**
 * A ticket for starting the authorization of connection `cid`: `<expiry ms>.<mac>`.
 * @example startTicket("s3cret", "con_…", Date.now()) // "1795881600000.Xq…"
 */
export function startTicket(apiToken: string, cid: string, now: number): string {
  const exp = now + STATE_TTL_MS;
  return `${exp}.${mac(apiToken, `${cid}.${exp}`)}`;
}

/**
 * Whether `ticket` was made for `cid` with this token and has not expired.
 * @example ticketValid("s3cret", "con_…", startTicket("s3cret", "con_…", now), now) // true
 */
export function ticketValid(apiToken: string, cid: string, ticket: string, now: number): boolean {
  const [exp, sig] = ticket.split(".");
  if (!exp || !sig || !/^\d+$/.test(exp) || Number(exp) <= now) return false;
  return sameSecret(sig, mac(apiToken, `${cid}.${exp}`));
}

/**
 * The path that starts a connection's authorization, with a ticket when a token is set.
 * @example startPath("gmail", "con_…") // "/oauth/start/gmail?cid=con_…"
 */
export function startPath(integration: string, cid: string, apiToken?: string, now = Date.now()) {
  const base = `/oauth/start/${integration}?cid=${encodeURIComponent(cid)}`;
  return apiToken ? `${base}&ticket=${encodeURIComponent(startTicket(apiToken, cid, now))}` : base;
}
