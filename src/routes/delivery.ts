/**
 * What the two routes that take deliveries share, webhooks (`/webhooks/<id>`) and connections'
 * providers (`/inbound/<id>`): their mounting, and reading a request within its limits.
 */
import { type Context, Hono } from "hono";
import { HooklineError } from "../errors.ts";
import { closeAfterUnreadBody, readWebhookBody } from "./webhook-body.ts";

/** Request headers larger than this (names and values) are refused with 431. */
export const MAX_HEADER_BYTES = 64 * 1024;

export interface DeliveryLimits {
  /** Largest accepted body, bytes (`SVC_MAX_BODY`). */
  maxBody: number;
  /** Longest wait for the body once the headers are in, ms (default 30 s). */
  bodyTimeoutMs?: number;
}

function headerBytes(headers: Headers): number {
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
  if (headerBytes(c.req.raw.headers) > MAX_HEADER_BYTES) {
    throw new HooklineError("headers_too_large", "the request headers exceed 64 KiB");
  }
  return readWebhookBody(c, {
    maxBody: limits.maxBody,
    timeoutMs: limits.bodyTimeoutMs ?? 30_000,
  });
}

/**
 * Routes for `ANY /<id>` and `ANY /<id>/<suffix>` answered by `handle`. When `handle` throws
 * (a refusal, maybe before the body was read) the connection closes only once the client has
 * sent its body (`closeAfterUnreadBody`), so the client reads the answer rather than a reset.
 * @example app.route("/webhooks", deliveryRoutes(async (c) => c.json({}, 202)));
 */
export function deliveryRoutes(handle: (c: Context) => Promise<Response>): Hono {
  const app = new Hono();
  const guarded = async (c: Context) => {
    try {
      return await handle(c);
    } catch (err) {
      closeAfterUnreadBody(c);
      throw err;
    }
  };
  app.all("/:id", guarded);
  app.all("/:id/*", guarded);
  return app;
}
