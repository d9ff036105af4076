import type { Context } from "hono";
import { HooklineError } from "../errors.ts";
import type { Outcome } from "../model/records.ts";
import type { ObservedEnv } from "../observe/observer.ts";
import type { DedupRecord } from "./dedup-records.ts";

/** An HTTP header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value: visible characters, spaces and tabs; never CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Why an outcome cannot be written as an HTTP response, or null when it can. The SDK refuses
 * these at `http_outcome`; this is the service's own check, for outcomes that did not come
 * through it (another SDK, a tampered process).
 * @example outcomeProblem({ status_code: 200, headers: { "X-A": "1\r\nX-B: 2" }, body: null, more: false })
 */
export function outcomeProblem(outcome: Outcome): string | null {
  const status = outcome.status_code;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    return `status ${String(status)} is not an HTTP status (100-599)`;
  }
  if (typeof outcome.headers !== "object" || outcome.headers === null)
    return "headers must be a mapping";
  for (const [name, value] of Object.entries(outcome.headers)) {
    if (!TOKEN.test(name)) return `header name ${JSON.stringify(name)} is not an HTTP token`;
    if (typeof value !== "string" || !FIELD_VALUE.test(value)) {
      return `header ${name}: the value is not a string of visible characters (CR, LF, NUL are refused)`;
    }
  }
  return null;
}

/**
 * Throws 502 (problem+json) when the final outcome cannot be written as a response, so nothing
 * malformed reaches the wire.
 * @example checkOutcome(outcome, "ses_…")
 */
export function checkOutcome(outcome: Outcome, sessionId: string): void {
  const problem = outcomeProblem(outcome);
  if (!problem) return;
  throw new HooklineError(
    "bad_gateway",
    `session ${sessionId} answered with a malformed outcome: ${problem}`,
    { session_id: sessionId },
  );
}

/**
 * The answer to a repeated delivery: the first one's 202, or a sync trigger's stored outcome,
 * else 409 (the first is still running, or ended without an outcome). Marked `Idempotent-Replayed`.
 * @example return replayAnswer(c, record);
 */
export function replayAnswer(c: Context<ObservedEnv>, record: DedupRecord): Response {
  c.header("Idempotent-Replayed", "true");
  c.set("replayedDelivery", true);
  if (record.kind === "accepted") {
    return c.json({ event_id: record.event_id, session_id: record.session_id }, 202);
  }
  if (!record.outcome) {
    throw new HooklineError(
      "conflict",
      `this delivery was already received (event ${record.event_id}); its session has no final outcome to repeat`,
      { event_id: record.event_id, session_id: record.session_id },
    );
  }
  const { status_code, headers, body } = record.outcome;
  const out = new Headers(headers);
  out.set("Idempotent-Replayed", "true");
  const bytes = body && ![204, 205, 304].includes(status_code) ? Buffer.from(body, "base64") : null;
  if (bytes && !out.has("content-type")) out.set("content-type", "text/plain; charset=utf-8");
  return new Response(bytes, { status: status_code, headers: out });
}
