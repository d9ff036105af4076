import { createHmac } from "node:crypto";
import { sameSecret } from "../secrets.ts";

/** One inbound request as the verifiers see it: nothing of it is stored before they pass it. */
export interface InboundRequest {
  method: string;
  headers: Headers;
  /** The raw body: signatures are computed over these bytes, never over a re-encoding. */
  body: Uint8Array;
  /** Epoch ms, for the timestamp windows (tests pass their own). */
  now: number;
  /** What follows `/inbound/<id>/` in the path, without a leading slash (Confluence's category). */
  suffix?: string;
}

/** One event an inbound request makes, as a handler will see `event.event_type` and `event.data`. */
export interface InboundEvent {
  event_type: string;
  data: unknown;
}

/**
 * What changed at a provider since a connection's last read, as events, and how the read ends:
 * `settle(true)` once the events are stored (the connection's cursor moves on), `settle(false)`
 * when they were not (the cursor stays, so the provider's retry reads them again).
 */
export interface Pulled {
  events: InboundEvent[];
  settle: (stored: boolean) => Promise<void>;
}

/**
 * What a verifier decides. `refuse`: problem+json with that status, nothing stored. `answer`: the
 * provider's handshake (GitHub's ping, Slack's url_verification) or a delivery deliberately
 * dropped (the bot's own message), nothing stored. `events`: verified, to be ingested, with the
 * delivery id that makes repeats one event. `pull`: verified, but the request only says that
 * something changed (Google's push notifications): the events are read from the provider
 * with the connection's token (the route's `pull`).
 */
export type Verdict =
  | { kind: "refuse"; status: 400 | 401 | 403; detail: string }
  | { kind: "answer"; status: number; body: string; contentType: string }
  | { kind: "events"; delivery: string | null; events: InboundEvent[] }
  | { kind: "pull"; state: string };

/** A connection's vars by their short name (`pat_secret`, not `gh__pat_secret`); "" counts as unset. */
export type ConnectionVars = (name: string) => string | undefined;

/** Signed timestamps older or newer than this are refused (Slack and Standard Webhooks alike). */
export const MAX_SKEW_MS = 5 * 60_000;

export const refuse = (status: 400 | 401 | 403, detail: string): Verdict => ({
  kind: "refuse",
  status,
  detail,
});

/** HMAC-SHA256 of `parts` in order, under `key`. */
export function hmac(key: string | Buffer, ...parts: (string | Uint8Array)[]): Buffer {
  const mac = createHmac("sha256", key);
  for (const p of parts) mac.update(p);
  return mac.digest();
}

/** The media type of a Content-Type header, lower-case, without parameters. */
export function mediaType(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** JSON text as a value, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A urlencoded body as name → value (the last of repeated names wins). */
export function parseForm(body: Uint8Array): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(Buffer.from(body).toString("utf8")));
}

/**
 * Whether a Unix-seconds timestamp header is within the window; a text that is not a whole
 * number is not.
 */
export function fresh(seconds: string, now: number): boolean {
  if (!/^\d{1,12}$/.test(seconds)) return false;
  return Math.abs(now - Number(seconds) * 1000) <= MAX_SKEW_MS;
}

export const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * Checks a WebSub-style `<header>: sha256=<hex HMAC-SHA256 of the raw body>` (GitHub's
 * X-Hub-Signature-256, Jira's X-Hub-Signature): the problem in words, or null when it holds.
 * @example hubSignature(req, "x-hub-signature", secret) // null, or "X-Hub-Signature does not match the body"
 */
export function hubSignature(req: InboundRequest, header: string, secret: string): string | null {
  const name = header.replace(
    /(^|-)([a-z])/g,
    (_, dash: string, c: string) => dash + c.toUpperCase(),
  );
  const signature = req.headers.get(header);
  if (!signature) return `${name} is missing`;
  const expected = `sha256=${hmac(secret, req.body).toString("hex")}`;
  return sameSecret(signature.trim().toLowerCase(), expected)
    ? null
    : `${name} does not match the body`;
}
