/**
 * The one way a delivery is taken, for the two routes that take them: webhooks
 * (`/webhooks/<id>`) and connections' providers (`/inbound/<id>`). Resolve the address
 * (cached), read the request within its limits, let the route verify it and say what came in,
 * claim the delivery once (dedup), ingest it, answer. What differs between the two routes is
 * a `DeliveryRoute`: webhooks.ts and inbound.ts.
 */
import { type Context, Hono } from "hono";
import { HooklineError } from "../errors.ts";
import type { ObservedEnv } from "../observe/observer.ts";
import type { Delivery, Ingested, Prepared, SessionManager } from "../sessions/manager.ts";
import type { AddressCache, ResolvedAddress } from "./address-cache.ts";
import type { Deduper, DedupRecord, FirstDelivery } from "./dedup.ts";
import { type HeaderPairs, requestHeaders } from "./request-headers.ts";
import { closeAfterUnreadBody, readWebhookBody } from "./webhook-body.ts";

/** Request headers larger than this (names and values) are refused with 431. */
export const MAX_HEADER_BYTES = 64 * 1024;

export interface DeliveryLimits {
  /** Largest accepted body, bytes (`SVC_MAX_BODY`). */
  maxBody: number;
  /** Longest wait for the body once the headers are in, ms (default 30 s). */
  bodyTimeoutMs?: number;
}

/** A delivery route's Hono context: the observer hears what it did (typed variables). */
export type DeliveryContext = Context<ObservedEnv>;

/**
 * What a route makes of a request it read: a delivery to ingest (and its dedup key), or an
 * answer. `settle`, given, is told once whether the delivery's events were stored (a read of a
 * provider's changes moves its cursor on only then).
 */
export type TakenRequest =
  | { delivery: Delivery; key: string | null; settle?: (stored: boolean) => Promise<void> }
  | { answer: Response };

/** What one delivery route knows that the other does not. */
export interface DeliveryRoute {
  /** The detail of the 404 for an address that reaches nothing this route serves. */
  unknown: string;
  /** Whether the resolved address is one of this route's (a trigger's, a connection's). */
  serves: (address: ResolvedAddress) => boolean;
  /**
   * Verifies the request (throws a refusal) and says what came in; before anything is stored.
   * A route whose provider only says that something changed reads what did before it resolves.
   */
  take: (
    c: DeliveryContext,
    address: ResolvedAddress,
    body: Uint8Array,
  ) => TakenRequest | Promise<TakenRequest>;
  /** The answer once every event is stored and its sessions started (or queued). */
  answer: (
    c: DeliveryContext,
    address: ResolvedAddress,
    done: Ingested[],
    claim: FirstDelivery | null,
  ) => Promise<Response>;
  /** The answer to a repeat of a delivery already taken. */
  replay: (c: DeliveryContext, address: ResolvedAddress, record: DedupRecord) => Response;
}

/** What the delivery routes share: where addresses lead, the way in, repeats, the limits. */
export interface DeliveryDeps {
  addresses: Pick<AddressCache, "get">;
  sessions: Pick<SessionManager, "prepare">;
  /** Answers repeated deliveries once; none: off. */
  dedup?: Deduper;
  limits: DeliveryLimits;
}

/**
 * Routes for `ANY /<id>` and `ANY /<id>/<suffix>` that take deliveries the one way: the address
 * resolved (404), headers and body read within their limits (431, 413, 408 before anything is
 * stored), the route's `take` (a refusal, a handshake, or what came in), the delivery claimed
 * (a repeat gets the first one's answer), ingested, answered. A delivery that was not taken
 * (a refusal, 503) lets its claim go, so a retry may go on. When a handler throws (maybe
 * before the body was read) the connection closes only once the client has sent its body
 * (`closeAfterUnreadBody`), so the client reads the answer rather than a reset.
 * @example app.route("/webhooks", deliveryRoutes(route, deps)); // route: webhooks.ts, inbound.ts
 */
export function deliveryRoutes(route: DeliveryRoute, deps: DeliveryDeps): Hono<ObservedEnv> {
  const app = new Hono<ObservedEnv>();
  const guarded = async (c: DeliveryContext) => {
    try {
      return await takeDelivery(c, route, deps);
    } catch (err) {
      closeAfterUnreadBody(c);
      throw err;
    }
  };
  app.all("/:id", guarded);
  app.all("/:id/*", guarded);
  return app;
}

/** One delivery, the one way: resolve, read, take, claim, ingest, answer (then settle). */
async function takeDelivery(
  c: DeliveryContext,
  route: DeliveryRoute,
  deps: DeliveryDeps,
): Promise<Response> {
  const address = await deps.addresses.get(c.req.param("id")!);
  if (!address || !route.serves(address)) throw new HooklineError("not_found", route.unknown);
  const taken = await route.take(c, address, await readDelivery(c, deps.limits));
  if ("answer" in taken) return taken.answer;
  if (!taken.settle) return ingestTaken(c, route, deps, address, taken);
  let stored = false;
  try {
    const answer = await ingestTaken(c, route, deps, address, taken, () => {
      stored = true;
    });
    return answer;
  } finally {
    await taken.settle(stored);
  }
}

/** A taken delivery claimed once, ingested (`onStored` once its events are), answered. */
async function ingestTaken(
  c: DeliveryContext,
  route: DeliveryRoute,
  deps: DeliveryDeps,
  address: ResolvedAddress,
  taken: Extract<TakenRequest, { delivery: Delivery }>,
  onStored = () => {},
): Promise<Response> {
  const prepared = deps.sessions.prepare(taken.delivery);
  const claimed = taken.key && deps.dedup ? await claimOnce(deps.dedup, taken.key, prepared) : null;
  if (claimed && !claimed.first) return route.replay(c, address, claimed.record);
  const claim = claimed?.first ? claimed : null;
  try {
    const done = await prepared.run();
    onStored();
    await claim?.accepted();
    return await route.answer(c, address, done, claim);
  } catch (err) {
    // Before the delivery was accepted nothing stays: a retry with the same key may go on.
    await claim?.failed().catch(() => {});
    if (err instanceof HooklineError && err.code === "unavailable")
      c.header("Retry-After", String(err.extra.retry_after ?? 1));
    throw err;
  }
}

/** Claims a delivery's key for the ids it was planned with, or finds the first delivery's answer. */
function claimOnce(dedup: Deduper, key: string, prepared: Prepared) {
  const kind = prepared.sync ? ("sync" as const) : ("accepted" as const);
  return dedup.begin(key, { event_id: prepared.eventId, session_id: prepared.sessionId, kind });
}

function headerBytes(headers: HeaderPairs): number {
  let n = 0;
  for (const [k, v] of headers) n += k.length + v.length + 4;
  return n;
}

/**
 * A delivery's body, its headers and body within their limits: 431 past MAX_HEADER_BYTES, then
 * 413, 408 or 400 as `readWebhookBody` reads it; before anything is stored.
 * @example const body = await readDelivery(c, { maxBody: 1 << 20 });
 */
export async function readDelivery(c: Context, limits: DeliveryLimits): Promise<Uint8Array> {
  if (headerBytes(requestHeaders(c)) > MAX_HEADER_BYTES) {
    throw new HooklineError("headers_too_large", "the request headers exceed 64 KiB");
  }
  return readWebhookBody(c, {
    maxBody: limits.maxBody,
    timeoutMs: limits.bodyTimeoutMs ?? 30_000,
  });
}
