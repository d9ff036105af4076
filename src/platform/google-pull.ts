import { googleApiUrl } from "../connections/google-api.ts";
import { isGoogleWatchKind, WATCH_VARS } from "../connections/google-push.ts";
import { type GoogleWatchInput, pullGoogleChanges } from "../connections/google-watch.ts";
import { connectionVars, type Pulled } from "../connections/index.ts";
import type { KeyedLock } from "../locks.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import type { WatchParts } from "./google-watch-removal.ts";

/** How long one instance's claim on a connection's read holds the others off (it died mid-read). */
const CLAIM_MS = 5 * 60_000;
/** How long a notification waits for another instance's read of the same connection. */
const PULL_WAIT_MS = 15_000;

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

/** A read under way: the claim taken, Google read; `settle` ends it. */
async function readOnce(d: WatchParts, doc: ProjectDoc, conn: ConnectionRecord, key: string) {
  const kind = conn.integration as keyof typeof WATCH_VARS;
  const cursorVar = WATCH_VARS[kind].cursor;
  const cursor = doc.vars.find((v) => v.name === `${conn.name}__${cursorVar}`)?.value ?? "";
  try {
    const input = await inputOf(d, doc, conn);
    if (!input) throw new Error("no OAuth token to read the changes with");
    const { events, cursor: next } = await pullGoogleChanges(input);
    const settle = async (stored: boolean) => {
      try {
        const write = { name: cursorVar, value: next, secret: false };
        if (stored && next !== cursor) await d.store.write(doc.project.id, conn.name, [write], []);
      } finally {
        await d.cluster.forget?.(key);
      }
    };
    return { events, settle };
  } catch (e) {
    await d.cluster.forget?.(key);
    throw e;
  }
}

/**
 * Reads what changed for one connection (Calendar: events by sync token; Drive: changes by page
 * token), one read at a time across the fleet: the claim on the connection's cursor (the
 * database's, on PostgreSQL) is held from the read until `settle`, which saves the new cursor
 * once the events are stored (not when they were not: the provider's retry reads them again),
 * then lets the claim go. Another instance's notification waits for it (15 s at most), then
 * reads on from the new cursor, so one change is never two events.
 */
async function pullOne(d: WatchParts, projectId: string, name: string): Promise<Pulled> {
  const until = d.clock.now() + PULL_WAIT_MS;
  for (;;) {
    const doc = await d.projects.stores.projects.get(projectId);
    const conn = doc?.connections?.find((c) => c.name === name && isWatched(c));
    if (!doc || !conn) return { events: [], settle: async () => {} };
    const cursorVar = WATCH_VARS[conn.integration as keyof typeof WATCH_VARS].cursor;
    const cursor = doc.vars.find((v) => v.name === `${name}__${cursorVar}`)?.value ?? "";
    const key = `google-pull:${conn.id}:${cursor}`;
    if (await d.cluster.once(key, CLAIM_MS)) return readOnce(d, doc, conn, key);
    if (d.clock.now() > until) throw new Error("another instance is reading this connection");
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * `pullOne` serialised on this instance per connection: the lock is held until the read is
 * settled, so two notifications taken here at once read one after the other.
 * @example const { events, settle } = await pullChanges(parts, locks, projectId, "cal"); … await settle(true);
 */
export function pullChanges(
  d: WatchParts,
  locks: KeyedLock,
  projectId: string,
  name: string,
): Promise<Pulled> {
  return new Promise<Pulled>((resolve, reject) => {
    void locks
      .run(`${projectId}:${name}`, async () => {
        const pulled = await pullOne(d, projectId, name);
        let release = () => {};
        const settled = new Promise<void>((r) => {
          release = r;
        });
        resolve({
          events: pulled.events,
          settle: (stored) => pulled.settle(stored).finally(release),
        });
        await settled;
      })
      .catch(reject);
  });
}
