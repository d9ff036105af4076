import { type GoogleCaller, googleApiUrl } from "../connections/google-api.ts";
import {
  deleteFormWatches,
  formsApiUrl,
  isPubsubKind,
  PUBSUB_VARS,
  type PubsubKind,
  stopGmail,
  WATCH_STATE_VARS,
  watchForms,
  watchGmail,
} from "../connections/google-pubsub.ts";
import { renewDue } from "../connections/google-watch.ts";
import { connectionVars } from "../connections/index.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import type { WatchParts } from "./google-watch-removal.ts";

/** How long one instance's claim on a watch's making, renewal or stop holds the others off. */
const CLAIM_MS = 5 * 60_000;
/** The look after a renewal past due (it failed, or another instance claimed it). */
const RETRY_MS = 30_000;
/** The longest sleep between two looks. */
export const SWEEP_MS = 3600_000;

/** The Pub/Sub topics the watches publish to (`SVC_GMAIL_PUBSUB_TOPIC`, …); unset: no watch. */
export interface PubsubTopics {
  gmail?: string;
  googleforms?: string;
}

/** A Gmail or Forms connection with an inbound path: one whose watches the service keeps. */
export const isPubsubWatched = (c: ConnectionRecord) =>
  isPubsubKind(c.integration) && c.inbound_id !== "";

const varOf = (doc: ProjectDoc, conn: string, name: string) =>
  doc.vars.find((v) => v.name === `${conn}__${name}`);

/** When the connection's watch expires (epoch ms), or null when it has none. */
function expiresOf(doc: ProjectDoc, conn: ConnectionRecord): number | null {
  if (!isPubsubKind(conn.integration)) return null;
  const at = Date.parse(
    varOf(doc, conn.name, PUBSUB_VARS[conn.integration].expiration)?.value ?? "",
  );
  return Number.isNaN(at) ? null : at;
}

/** When the connection's watch is to be renewed (as the channels': google-watch.ts), or null. */
function dueOf(doc: ProjectDoc, conn: ConnectionRecord): number | null {
  const expires = expiresOf(doc, conn);
  if (expires === null || !isPubsubKind(conn.integration)) return null;
  const rec = varOf(doc, conn.name, PUBSUB_VARS[conn.integration].expiration);
  return renewDue(expires, rec ? Date.parse(rec.updated_at) : 0);
}

/** When to look at the connection again: its renewal; past due, 30 s while it lives, else hourly. */
export function nextPubsubLook(doc: ProjectDoc, conn: ConnectionRecord, now: number): number {
  const due = dueOf(doc, conn);
  if (due === null) return now + SWEEP_MS;
  if (due > now) return due;
  return (expiresOf(doc, conn) ?? 0) > now ? now + RETRY_MS : now + SWEEP_MS;
}

/** Who calls Google for the connection: the API root of its kind and the freshest token. */
export async function pubsubCaller(
  d: WatchParts,
  doc: ProjectDoc,
  name: string,
  kind: PubsubKind,
  removed = false,
): Promise<GoogleCaller | null> {
  const vars = connectionVars(doc, name, (s) => d.projects.secrets.open(s));
  const fresh = removed
    ? await d.google?.removedToken?.(doc.project.id, name, kind).catch(() => undefined)
    : await d.google?.accessToken?.(doc.project.id, name);
  const token = fresh ?? vars("oauth_AccessToken");
  if (!token) return null;
  const api = kind === "gmail" ? googleApiUrl(vars("base_url")) : formsApiUrl(vars("base_url"));
  return { api, token, fetch: d.fetch };
}

/**
 * One connection looked at: its watch made, or renewed when due, by the one instance whose
 * claim the database takes, when the connection has a token, a topic (and Forms a `FormID`).
 * The vars it saved, or null when nothing was called. A failure is one warning line.
 */
export async function ensurePubsubWatch(
  d: WatchParts,
  topics: PubsubTopics,
  doc: ProjectDoc,
  conn: ConnectionRecord,
): Promise<Record<string, string> | null> {
  if (!isPubsubKind(conn.integration)) return null;
  const kind = conn.integration;
  const topic = topics[kind];
  const has = (n: string) => Boolean(varOf(doc, conn.name, n)?.value);
  const due = dueOf(doc, conn);
  if (!topic || !has("oauth_AccessToken") || (kind === "googleforms" && !has("FormID"))) {
    return null;
  }
  if (due !== null && d.clock.now() < due) return null;
  const key = `pubsub-watch:${conn.id}:${varOf(doc, conn.name, PUBSUB_VARS[kind].expiration)?.value ?? ""}`;
  if (!(await d.cluster.once(key, CLAIM_MS))) return null;
  const where = `${kind} connection ${doc.project.name}/${conn.name}`;
  try {
    const caller = await pubsubCaller(d, doc, conn.name, kind);
    if (!caller) throw new Error("no OAuth token to watch with");
    const vars = connectionVars(doc, conn.name, (s) => d.projects.secrets.open(s));
    const set =
      kind === "gmail"
        ? await watchGmail(caller, vars, topic)
        : await watchForms(caller, vars, topic);
    const writes = Object.entries(set).map(([name, value]) => ({ name, value, secret: false }));
    await d.store.write(doc.project.id, conn.name, writes, []);
    d.log.info(
      `${where}: watch ${due === null ? "made" : "renewed"} until ${set[PUBSUB_VARS[kind].expiration]}`,
    );
    return set;
  } catch (e) {
    d.log.warn(`${where}: watch not made: ${(e as Error).message}`);
    await d.cluster.forget?.(key);
    return null;
  }
}

/**
 * The Gmail and Forms watches of connections the project no longer has (its vars still hold
 * a watch's expiry) stopped at Google (`users.stop`; each form watch deleted) with a token
 * refreshed for it, then their vars cleared (a stop Google refuses: one warning line; the
 * watch expires within a week). Claimed across the fleet. Never throws.
 */
export async function stopRemovedPubsub(d: WatchParts, doc: ProjectDoc): Promise<void> {
  for (const kind of ["gmail", "googleforms"] as const) {
    const suffix = `__${PUBSUB_VARS[kind].expiration}`;
    for (const v of doc.vars.filter((x) => x.name.endsWith(suffix) && x.value)) {
      const name = v.name.slice(0, -suffix.length);
      const live = doc.connections?.some(
        (c) => c.name === name && c.integration === kind && c.inbound_id,
      );
      if (live) continue;
      const where = `${kind} connection ${doc.project.name}/${name} (removed)`;
      try {
        if (!(await d.cluster.once(`pubsub-stop:${doc.project.id}:${name}:${v.value}`, CLAIM_MS)))
          continue;
        const caller = await pubsubCaller(d, doc, name, kind, true);
        const vars = connectionVars(doc, name, (s) => d.projects.secrets.open(s));
        const problems = !caller
          ? ["no token"]
          : kind === "gmail"
            ? [await stopGmail(caller)].filter((p): p is string => p !== null)
            : await deleteFormWatches(caller, vars);
        if (problems.length) d.log.warn(`${where}: watch not stopped (${problems.join("; ")})`);
        else d.log.info(`${where}: watch stopped`);
        await d.store.write(doc.project.id, name, [], WATCH_STATE_VARS[kind]);
      } catch (e) {
        d.log.warn(`${where}: watch not stopped: ${String(e)}`);
      }
    }
  }
}
