import { googleApiUrl } from "../connections/google-api.ts";
import { isGoogleWatchKind, WATCH_VARS } from "../connections/google-push.ts";
import { type GoogleWatchInput, pullGoogleChanges } from "../connections/google-watch.ts";
import { connectionVars, type Pulled } from "../connections/index.ts";
import type { KeyedLock } from "../locks.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import { claimedRead } from "./claimed-read.ts";
import type { WatchParts } from "./google-watch-removal.ts";

/** A Calendar or Drive connection with an inbound path: one whose channel the service keeps. */
export const isWatched = (c: ConnectionRecord) =>
  isGoogleWatchKind(c.integration) && c.inbound_id !== "";

/**
 * A connection's watch input with the freshest token there is (the OAuth refresher's, else
 * the stored `oauth_AccessToken`); null without a token.
 */
export async function inputOf(
  d: WatchParts,
  doc: ProjectDoc,
  conn: ConnectionRecord,
): Promise<GoogleWatchInput | null> {
  const vars = connectionVars(doc, conn.name, (s) => d.projects.secrets.open(s));
  const fresh = await d.google?.accessToken?.(doc.project.id, conn.name);
  const token = fresh ?? vars("oauth_AccessToken");
  if (!token || !isGoogleWatchKind(conn.integration)) return null;
  const caller = { api: googleApiUrl(vars("base_url")), token, fetch: d.fetch };
  return { kind: conn.integration, vars, caller, now: d.clock.now() };
}

/**
 * Reads what changed for one connection (Calendar: events by sync token; Drive: changes by page
 * token), one read at a time across the fleet and on this instance (claimed-read.ts): the new
 * cursor is saved once the events are stored.
 * @example const { events, settle } = await pullChanges(parts, locks, projectId, "cal"); … await settle(true);
 */
export function pullChanges(
  d: WatchParts,
  locks: KeyedLock,
  projectId: string,
  name: string,
): Promise<Pulled> {
  return claimedRead(d, locks, {
    lock: `${projectId}:${name}`,
    busy: "this connection",
    async find() {
      const doc = await d.projects.stores.projects.get(projectId);
      const conn = doc?.connections?.find((c) => c.name === name && isWatched(c));
      if (!doc || !conn) return null;
      const cursorVar = WATCH_VARS[conn.integration as keyof typeof WATCH_VARS].cursor;
      const cursor = doc.vars.find((v) => v.name === `${name}__${cursorVar}`)?.value ?? "";
      const claim = `google-pull:${conn.id}:${cursor}`;
      return { target: { doc, conn }, projectId, connection: name, cursorVar, cursor, claim };
    },
    async read({ doc, conn }) {
      const input = await inputOf(d, doc, conn);
      if (!input) throw new Error("no OAuth token to read the changes with");
      return pullGoogleChanges(input);
    },
  });
}
