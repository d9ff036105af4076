import { Hono } from "hono";
import { checkGoogleOidc, type KeySet } from "../connections/google-oidc.ts";
import {
  type PubsubKind,
  type PubsubMessage,
  pubsubMessage,
} from "../connections/google-pubsub.ts";
import type { Pulled } from "../connections/index.ts";
import { HooklineError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import type { ObservedEnv } from "../observe/observer.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { AddressCache } from "./address-cache.ts";
import { connectionKey, type Deduper } from "./dedup.ts";
import { type DeliveryContext, type DeliveryLimits, readDelivery } from "./delivery.ts";
import { requestOrigin } from "./forwarded.ts";
import { connectionDelivery } from "./inbound.ts";
import { createRefusalLog, type RefusalLog } from "./refusal-log.ts";

/** A connection a push is for. */
export interface PubsubTarget {
  doc: ProjectDoc;
  conn: ConnectionRecord;
}

/** What the Pub/Sub push routes work with. */
export interface PubsubRouteDeps {
  addresses: AddressCache;
  sessions: Pick<SessionManager, "prepare">;
  /** Takes each Pub/Sub message once per connection (a redelivery makes no second event). */
  dedup?: Deduper;
  limits: DeliveryLimits;
  verify: PubsubVerify;
  read: PubsubReads;
  publicUrl?: () => string;
  log: Logger;
}

/** What a push's OIDC token is checked against. */
export interface PubsubVerify {
  /** Google's signing keys (`SVC_GOOGLE_JWKS_URL`). */
  keys: KeySet;
  /** The audience the subscriptions' tokens name; unset: the push URL itself (Google's default). */
  audience?: string;
  /** The service account the pushes must come as (`email` claim); unset: any. */
  serviceAccount?: string;
}

/** The connections a push is for, and what it makes for each (the Pub/Sub keeper). */
export interface PubsubReads {
  targets: (kind: PubsubKind, m: PubsubMessage) => Promise<PubsubTarget[]>;
  pull: (t: PubsubTarget, m: PubsubMessage) => Promise<Pulled>;
}

const KINDS: Record<string, PubsubKind> = { gmail: "gmail", forms: "googleforms" };

/** One push verified and read: the token, then the message, then what it is about. */
async function verified(
  c: DeliveryContext,
  deps: PubsubRouteDeps,
  kind: PubsubKind,
  refusals: RefusalLog,
) {
  const body = await readDelivery(c, deps.limits);
  const path = new URL(c.req.url).pathname;
  const base = (deps.publicUrl?.() ?? requestOrigin(c)).replace(/\/+$/, "");
  const audience = deps.verify.audience || base + path;
  const want = { audience, email: deps.verify.serviceAccount, now: Date.now() };
  const header = c.req.header("authorization") ?? null;
  const problem = await checkGoogleOidc(header, deps.verify.keys, want);
  if (problem) {
    refusals.refused(`pubsub:${kind}`, `${kind} push`, `${kind} push refused (401): ${problem}`);
    c.set("refusedDelivery", { integration: kind, reason: "unauthorized" });
    throw new HooklineError("unauthorized", problem);
  }
  const m = pubsubMessage(body, c.req.raw.headers);
  if (!m) throw new HooklineError("bad_request", "the body is not a Pub/Sub push message");
  if (kind === "gmail" && !m.data.emailAddress) {
    throw new HooklineError("bad_request", "the message's data has no emailAddress");
  }
  if (kind === "googleforms" && !m.attributes.watchId) {
    throw new HooklineError("bad_request", "the message has no watchId attribute");
  }
  return m;
}

/**
 * One connection's events read and stored, once per Pub/Sub message id (a repeat stores
 * nothing); `settle` told whether they were.
 */
async function deliverTo(deps: PubsubRouteDeps, t: PubsubTarget, m: PubsubMessage) {
  const address = await deps.addresses.get(t.conn.inbound_id);
  if (!address?.connection) return [];
  const { events, settle } = await deps.read.pull(t, m);
  let stored = false;
  try {
    if (!events.length) return [];
    const prepared = deps.sessions.prepare(connectionDelivery(address, events));
    const key = m.messageId ? connectionKey(t.conn.id, `pubsub:${m.messageId}`) : null;
    const draft = {
      event_id: prepared.eventId,
      session_id: prepared.sessionId,
      kind: "accepted" as const,
    };
    const claim = key && deps.dedup ? await deps.dedup.begin(key, draft) : null;
    if (claim && !claim.first) return [];
    try {
      const done = await prepared.run();
      stored = true;
      await claim?.accepted();
      return done;
    } catch (e) {
      await claim?.failed().catch(() => {});
      throw e;
    }
  } finally {
    await settle(stored);
  }
}

/**
 * `POST /google/pubsub/gmail` and `/google/pubsub/forms`: Cloud Pub/Sub's pushes for every
 * Gmail and Forms connection. The OIDC token Google signs is checked first (google-oidc.ts:
 * 401 problem+json, nothing read or stored); the message (wrapped or unwrapped) names the
 * mailbox or the form watch, which finds the connections; each one's events are read with its
 * token and go to its triggers. 202 with the ids; 200 when no connection is watching.
 * @example app.route("/google/pubsub", pubsubRoutes(deps));
 */
export function pubsubRoutes(deps: PubsubRouteDeps): Hono<ObservedEnv> {
  const app = new Hono<ObservedEnv>();
  // A flood of forged pushes logs at most 10 lines a minute per route (refusal-log.ts).
  const refusals = createRefusalLog(deps.log);
  app.post("/:kind", async (c) => {
    const kind = KINDS[c.req.param("kind")];
    if (!kind) throw new HooklineError("not_found", "no Pub/Sub route here (gmail, forms)");
    const m = await verified(c, deps, kind, refusals);
    const targets = await deps.read.targets(kind, m);
    const done = [];
    for (const t of targets) done.push(...(await deliverTo(deps, t, m)));
    if (!done.length) return c.json({ ok: true, events: 0 }, 200);
    const sessionIds = done.flatMap((d) => (d.session ? [d.session.id] : []));
    return c.json({ event_ids: done.map((d) => d.event.id), session_ids: sessionIds }, 202);
  });
  return app;
}
