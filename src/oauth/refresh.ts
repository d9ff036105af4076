import { createHash } from "node:crypto";
import type { Cluster } from "../cluster/cluster.ts";
import { keyedLock } from "../locks.ts";
import type { Logger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import { presetOf } from "../providers/oauth-presets.ts";
import { sameSecret } from "../secrets.ts";
import { ClientMissing, type OAuthEnv, oauthClient } from "./client.ts";
import { type ConnectionVarStore, type Found, STATUS_VAR } from "./store.ts";
import { parseExpiry, TokenError, tokenRequest, tokenVarNames, tokenVars } from "./tokens.ts";

/** A token that expires within this is refreshed before a session starts. */
export const REFRESH_AHEAD_MS = 5 * 60_000;
/** How long an instance waits for another's refresh of the same token. */
const WAIT_MS = 20_000;
/** How long a refresh holds its key at most (an instance that dies mid-refresh lets go so). */
const HOLD_MS = 30_000;
/** What a connection's status var says after `invalid_grant`. */
export const NEEDS_AUTHORIZATION = "needs_authorization";

/** A refresh that could not be made; the message says why and never holds a token. */
export class RefreshError extends Error {}

/** A connection's access token and when it expires (epoch ms; undefined: not said). */
export interface FreshToken {
  token: string;
  expiry: number | undefined;
}

/** What refreshing is made of. */
export interface RefreshParts {
  settings: OAuthEnv;
  vars: ConnectionVarStore;
  cluster: Cluster;
  log: Logger;
  now: () => number;
}

const digest = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 24);

/**
 * Refreshes connections' tokens with their refresh tokens, the client secret staying in the
 * service. A refresh of one stored token happens once, however many sessions and instances ask
 * at the same moment: within an instance a lock, across instances `cluster.once` on the token's
 * hash; the others wait for the new token to be stored and take it. A rotated refresh token is
 * saved; `invalid_grant` marks the connection `needs_authorization`.
 * @example const r = tokenRefresher(parts); const { token } = await r.refresh(projectId, "gmail", true);
 */
/**
 * A connection's stored token, as read now; with `removed`, of a connection of that integration
 * the project no longer has (`ConnectionVarStore.left`).
 */
async function current(p: RefreshParts, projectId: string, connection: string, removed?: string) {
  const found = removed
    ? await p.vars.left(projectId, connection, removed)
    : await p.vars.byName(projectId, connection);
  const preset = found && presetOf(found.conn.integration);
  if (!found || !preset) {
    throw new RefreshError(`${connection} is not an OAuth connection of this project`);
  }
  const names = tokenVarNames(preset.scheme);
  const vars = p.vars.vars(found);
  const token = vars(names.access);
  const expiry = parseExpiry(vars(names.expiry));
  return { found, preset, vars, names, token, expiry, refresh: vars(names.refresh) };
}

type Current = Awaited<ReturnType<typeof current>>;

export function tokenRefresher(p: RefreshParts) {
  const locks = keyedLock();

  /** Refreshes when `force` or the token expires soon; answers the token to use. */
  async function refresh(projectId: string, connection: string, force: boolean) {
    const c = await current(p, projectId, connection);
    if (!c.token) {
      throw new RefreshError(`${connection} is not authorized: cli connection authorize`);
    }
    const soon = c.expiry !== undefined && c.expiry <= p.now() + REFRESH_AHEAD_MS;
    if (!force && !soon) return { token: c.token, expiry: c.expiry };
    if (!c.refresh) {
      if (!force) return { token: c.token, expiry: c.expiry };
      throw new RefreshError(`${connection} has no refresh token: authorize it again`);
    }
    const key = `oauth-refresh:${c.found.conn.id}:${digest(c.token)}`;
    return locks.run(key, async () => {
      const again = await current(p, projectId, connection);
      if (again.token && !sameSecret(again.token, c.token ?? ""))
        return { token: again.token, expiry: again.expiry };
      return (await p.cluster.once(key, HOLD_MS))
        ? exchangeHeld(p, again, projectId, key)
        : waitForNew(p, again, projectId, key);
    });
  }

  /**
   * Before a session: refreshes each of the project's OAuth connections whose token expires
   * within REFRESH_AHEAD_MS; true when one was (the session's vars are then read again). A
   * failure is logged and the session starts with what is stored; a connection that needs
   * authorization is not asked for again.
   */
  async function freshen(doc: ProjectDoc): Promise<boolean> {
    let changed = false;
    for (const conn of doc.connections ?? []) {
      const preset = presetOf(conn.integration);
      if (!preset) continue;
      const names = tokenVarNames(preset.scheme);
      const value = (name: string) =>
        doc.vars.find((v) => v.name === `${conn.name}__${name}`)?.value;
      // Refused once (invalid_grant): asking again before every session only repeats it.
      if (value(STATUS_VAR) === NEEDS_AUTHORIZATION) continue;
      const expiry = value(names.expiry);
      const at = parseExpiry(expiry);
      if (at === undefined || at > p.now() + REFRESH_AHEAD_MS) continue;
      try {
        await refresh(doc.project.id, conn.name, false);
        changed = true;
      } catch (e) {
        p.log.warn(`oauth ${doc.project.name}/${conn.name}: ${(e as Error).message}`);
      }
    }
    return changed;
  }

  /**
   * A token to clean up after a connection of `integration` the project no longer has (the
   * Jira webhook of a removed connection): refreshed when its vars hold a refresh token (a
   * rotated one saved under its name), else the stored one; undefined when there is none.
   */
  async function forRemoved(projectId: string, connection: string, integration: string) {
    const c = await current(p, projectId, connection, integration);
    if (!c.refresh) return c.token;
    return (await exchange(p, c, projectId)).token;
  }

  return { refresh, freshen, forRemoved };
}

export type TokenRefresher = ReturnType<typeof tokenRefresher>;

async function exchange(p: RefreshParts, c: Current, projectId: string) {
  const { found, preset } = c;
  const where = `${found.doc.project.name}/${found.conn.name}`;
  try {
    const client = oauthClient(p.settings, preset, c.vars);
    const grant = { grant_type: "refresh_token", refresh_token: c.refresh! };
    const t = await tokenRequest(preset, client, grant, p.now);
    await p.vars.write(projectId, found.conn.name, tokenVars(preset.scheme, t), [STATUS_VAR]);
    p.log.info(
      `oauth ${where}: token refreshed${t.refresh_token ? " (refresh token rotated)" : ""}`,
    );
    return { token: t.access_token, expiry: t.expires_at };
  } catch (e) {
    if (e instanceof ClientMissing) throw new RefreshError(e.message);
    if (!(e instanceof TokenError)) throw e;
    p.log.warn(`oauth ${where}: refresh refused (${e.code})`);
    const regrant = e.code === "invalid_grant" || preset.regrant?.includes(e.code);
    if (regrant) await markNeedsAuthorization(p, found, projectId);
    throw new RefreshError(`${preset.provider} refused the refresh (${e.code})`);
  }
}

async function markNeedsAuthorization(p: RefreshParts, found: Found, projectId: string) {
  const writes = [{ name: STATUS_VAR, value: NEEDS_AUTHORIZATION, secret: false }];
  await p.vars.write(projectId, found.conn.name, writes, []);
}

/**
 * Another instance refreshes the token `c` holds: waits for the new one to be stored; when that
 * instance lets go without one (its refresh failed), takes the refresh over.
 */
async function waitForNew(p: RefreshParts, c: Current, projectId: string, key: string) {
  const connection = c.found.conn.name;
  const until = p.now() + WAIT_MS;
  while (p.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await current(p, projectId, connection);
    if (now.token && !sameSecret(now.token, c.token ?? ""))
      return { token: now.token, expiry: now.expiry };
    if (now.vars(STATUS_VAR) === NEEDS_AUTHORIZATION) {
      throw new RefreshError(`${connection} needs authorization: cli connection authorize`);
    }
    if (await p.cluster.once(key, HOLD_MS)) return exchangeHeld(p, now, projectId, key);
  }
  throw new RefreshError(`${connection}: another instance's refresh did not finish in time`);
}

/**
 * The refresh made while holding `key`, which goes when it is done (stored or failed). The
 * token is read again once the key is held: another instance may have stored a new one between.
 */
async function exchangeHeld(p: RefreshParts, seen: Current, projectId: string, key: string) {
  try {
    const c = await current(p, projectId, seen.found.conn.name);
    if (c.token && !sameSecret(c.token, seen.token ?? ""))
      return { token: c.token, expiry: c.expiry };
    return await exchange(p, c, projectId);
  } finally {
    await p.cluster.forget?.(key);
  }
}
