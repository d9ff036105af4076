import { type Clock, systemClock } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import {
  isGoogleWatchKind,
  WATCH_VARS,
  watchExpiry,
  watchMoved,
} from "../connections/google-push.ts";
import {
  ensureGoogleWatch,
  type GoogleWatchResult,
  renewDue,
} from "../connections/google-watch.ts";
import type { Pulled } from "../connections/index.ts";
import { keyedLock, serialQueue } from "../locks.ts";
import type { Logger } from "../log.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import { connectionVarStore, type VarStoreDeps } from "../oauth/store.ts";
import { inputOf, isWatched, pullChanges } from "./google-pull.ts";
import { stopRemovedWatches, type WatchParts } from "./google-watch-removal.ts";

/** The longest sleep between two looks at every channel. */
const SWEEP_MS = 3600_000;
/** The shortest sleep before a renewal due now. */
const MIN_WAKE_MS = 1000;
/** The sleep after a renewal past due (it failed, or another instance claimed it). */
const RETRY_MS = 30_000;
/** How long one instance's claim on a channel's renewal holds the others off. */
const CLAIM_MS = 5 * 60_000;

export interface GoogleWatchDeps {
  projects: VarStoreDeps;
  cluster: Pick<Cluster, "once" | "forget">;
  /** The service's external base URL (`SVC_PUBLIC_URL`, else the listening address). */
  publicUrl?: () => string;
  log: Logger;
  clock?: Clock;
  /** A fresh access token (the OAuth refresher), the fetch to call Google with (tests). */
  google?: {
    accessToken?: (projectId: string, connection: string) => Promise<string | undefined>;
    /** A token for a removed connection (`oauth.tokens.forRemoved`). */
    removedToken?: (p: string, c: string, integration: string) => Promise<string | undefined>;
    fetch?: typeof fetch;
  };
}

/** The watch channels of Google Calendar and Drive connections, made, renewed, read, stopped. */
export interface GoogleWatchKeeper {
  /** Makes or renews one connection's channel (after an authorization); never rejects. */
  ensure(projectId: string, connection: string): Promise<GoogleWatchResult | null>;
  /** A project changed: its channels are looked at (and removed connections' stopped). */
  changed(projectId: string): void;
  /** What changed since the connection's cursor (a notification came): google-pull.ts. */
  pull(projectId: string, connection: string): Promise<Pulled>;
  /** Looks at every channel now, then when the next renewal is due (an hour at most). */
  start(): void;
  idle(): Promise<void>;
  dispose(): Promise<void>;
}

/** The parts every step uses, the clock settled. */
function parts(deps: GoogleWatchDeps): WatchParts {
  const clock = deps.clock ?? systemClock;
  const store = connectionVarStore(deps.projects);
  return { ...deps, clock, store, fetch: deps.google?.fetch ?? fetch };
}

/** When the connection's channel expiry was saved (its renewal's half-life counts from it). */
function savedAt(doc: ProjectDoc, conn: ConnectionRecord, name: string): number {
  const rec = doc.vars.find((v) => v.name === `${conn.name}__${name}`);
  return rec ? Date.parse(rec.updated_at) : 0;
}

/** When the connection's channel is to be renewed, or null when it has none. */
function dueOf(doc: ProjectDoc, conn: ConnectionRecord): number | null {
  const expires = expiresOf(doc, conn);
  if (expires === null || !isGoogleWatchKind(conn.integration)) return null;
  return renewDue(expires, savedAt(doc, conn, WATCH_VARS[conn.integration].expiration));
}

/** When the connection's channel expires, or null when it has none. */
function expiresOf(doc: ProjectDoc, conn: ConnectionRecord): number | null {
  if (!isGoogleWatchKind(conn.integration)) return null;
  const names = WATCH_VARS[conn.integration];
  const value = doc.vars.find((v) => v.name === `${conn.name}__${names.expiration}`)?.value;
  return watchExpiry(conn.integration, value);
}

/**
 * When to look at a connection again: at its renewal; one past due (failed, or claimed by
 * another instance) in RETRY_MS while its channel lives, hourly once it has expired (a token
 * revoked for good is not asked about every 30 s).
 */
function nextLook(doc: ProjectDoc, conn: ConnectionRecord, now: number): number {
  const due = dueOf(doc, conn);
  if (due === null) return now + SWEEP_MS;
  if (due > now) return due;
  return (expiresOf(doc, conn) ?? 0) > now ? now + RETRY_MS : now + SWEEP_MS;
}

/** One connection looked at: its channel made or renewed when due, claimed across the fleet. */
async function ensureOne(
  d: WatchParts & GoogleWatchDeps,
  doc: ProjectDoc,
  conn: ConnectionRecord,
): Promise<GoogleWatchResult | null> {
  const base = d.publicUrl?.();
  const due = dueOf(doc, conn);
  if (!base || !isGoogleWatchKind(conn.integration)) return null;
  const names = WATCH_VARS[conn.integration];
  const value = (n: string) => doc.vars.find((v) => v.name === `${conn.name}__${n}`)?.value;
  const live = value(names.id) && due !== null && d.clock.now() < due;
  if (!value("oauth_AccessToken") || (live && !watchMoved(conn.integration, value))) return null;
  const what = [value(names.id), value(names.expiration), value("CalendarID")];
  const key = `google-watch:${conn.id}:${what.map((x) => x ?? "").join(":")}`;
  if (!(await d.cluster.once(key, CLAIM_MS))) return null;
  const input = await inputOf(d, doc, conn);
  if (!input) return null;
  const address = `${base.replace(/\/+$/, "")}/inbound/${conn.inbound_id}`;
  const result = await ensureGoogleWatch(input, address, savedAt(doc, conn, names.expiration));
  const where = `${conn.integration} connection ${doc.project.name}/${conn.name}`;
  if (result.action === "failed") {
    d.log.warn(`${where}: watch channel not made: ${result.detail}`);
    await d.cluster.forget?.(key); // the next change or look may try again
  } else if (result.action !== "kept") d.log.info(`${where}: ${result.detail}`);
  const writes = Object.entries(result.set).map(([name, v]) => ({
    name,
    value: v,
    secret: name === names.token,
  }));
  if (writes.length) await d.store.write(doc.project.id, conn.name, writes, []);
  return result;
}

/** One connection looked at; a failure is one warning line, never a throw. */
const tryOne = (d: WatchParts & GoogleWatchDeps, doc: ProjectDoc, conn: ConnectionRecord) =>
  ensureOne(d, doc, conn).catch((e: unknown) => {
    d.log.warn(`${conn.integration} connection ${doc.project.name}/${conn.name}: ${String(e)}`);
    return null;
  });

/**
 * A project looked at (its removed connections' channels stopped, unless `only` names one
 * connection to look at), then when to look again (epoch ms, `nextLook`).
 */
async function lookAt(d: WatchParts & GoogleWatchDeps, doc: ProjectDoc, only?: string) {
  if (!only) await stopRemovedWatches(d, doc);
  const conns = (doc.connections ?? []).filter((c) => isWatched(c) && (!only || c.name === only));
  let result: GoogleWatchResult | null = null;
  for (const conn of conns) result = (await tryOne(d, doc, conn)) ?? result;
  const fresh = (await d.projects.stores.projects.get(doc.project.id)) ?? doc;
  const now = d.clock.now();
  let next = now + SWEEP_MS;
  for (const conn of (fresh.connections ?? []).filter(isWatched)) {
    next = Math.min(next, nextLook(fresh, conn, now));
  }
  return { result, next };
}

/**
 * A timer that runs `tick` at the earliest time it was asked for (`at`), then at the time
 * `tick` resolves with; an hour on when it fails.
 */
export function wakeTimer(clock: Clock, tick: () => Promise<number>) {
  let timer: unknown = null;
  let nextAt = Number.POSITIVE_INFINITY;
  let stopped = false;
  const at = (when: number) => {
    if (stopped || (timer !== null && when >= nextAt)) return;
    if (timer !== null) clock.clearTimeout(timer);
    nextAt = when;
    const fire = () => {
      timer = null;
      void tick().then(at, () => at(clock.now() + SWEEP_MS));
    };
    timer = clock.setTimeout(fire, Math.max(when - clock.now(), MIN_WAKE_MS));
  };
  const stop = () => {
    stopped = true;
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
  };
  return { at, stop };
}

/**
 * The keeper of Google Calendar and Drive connections' watch channels (src/connections/
 * google-watch.ts): a channel is made once the connection has an OAuth token (an
 * authorization, a var set, a deploy), renewed when due (3 days before its expiry, or halfway
 * through a shorter life) by the one instance whose claim the database takes, read from when
 * a notification comes, and stopped once the connection is gone (google-watch-removal.ts).
 * Every instance wakes when a renewal is due; the claim decides which one renews.
 * @example const keeper = googleWatchKeeper({ projects, cluster, publicUrl, log }); keeper.start();
 */
export function googleWatchKeeper(deps: GoogleWatchDeps): GoogleWatchKeeper {
  const d = { ...deps, ...parts(deps) };
  const locks = keyedLock();
  let disposed = false;
  const queue = serialQueue((e: unknown) => d.log.error("google watches", e));
  const serial = queue.run;
  const sweep = async () => {
    let next = d.clock.now() + SWEEP_MS;
    for (const doc of await d.projects.stores.projects.list()) {
      next = Math.min(next, (await lookAt(d, doc)).next);
    }
    return next;
  };
  const timer = wakeTimer(d.clock, () => serial(sweep));
  const byId = async (projectId: string, only?: string) => {
    const doc = await d.projects.stores.projects.get(projectId);
    if (!doc) return null;
    const { result, next } = await lookAt(d, doc, only);
    timer.at(next);
    return result;
  };
  return {
    ensure: (p, c) => serial(() => byId(p, c)).catch(() => null),
    changed(projectId) {
      if (!disposed) void serial(() => byId(projectId)).catch(() => {});
    },
    pull: (p, c) => pullChanges(d, locks, p, c),
    start: () => timer.at(d.clock.now()),
    idle: () => queue.idle(),
    async dispose() {
      disposed = true;
      timer.stop();
      await this.idle();
    },
  };
}
