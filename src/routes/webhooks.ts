import type { Context } from "hono";
import { HooklineError } from "../errors.ts";
import { buildWebhookData } from "../events/data.ts";
import type { Outcome } from "../model/records.ts";
import { SYNC_ANSWER } from "../observe/observer.ts";
import {
  type IngestRequest,
  type OutcomeWait,
  planIngest,
  type SessionManager,
} from "../sessions/manager.ts";
import type { Deduper } from "./dedup.ts";
import { deliveryRoutes, readDelivery } from "./delivery.ts";
import { checkOutcome, replayAnswer } from "./outcome-check.ts";
import type { TriggerCache } from "./trigger-cache.ts";

export interface WebhookDeps {
  triggers: TriggerCache;
  sessions: SessionManager;
  maxBody: number;
  syncTimeoutMs: number;
  /** Longest wait for a body once the headers are in, ms (default 30 s). */
  bodyTimeoutMs?: number;
  /** Answers repeated deliveries (Idempotency-Key, webhook-id, dedup_header) once; none: off. */
  dedup?: Deduper;
}

/** Statuses whose responses carry no body, whatever the handler gave. */
const NO_BODY = new Set([204, 205, 304]);

/** The final outcome as the HTTP response. */
function toResponse(outcome: Outcome, sessionId: string): Response {
  checkOutcome(outcome, sessionId);
  if (outcome.status_code < 200) {
    // 1xx are interim statuses: a client would wait for a final one that never comes.
    throw new HooklineError(
      "bad_gateway",
      `session ${sessionId} answered with status ${outcome.status_code}, which cannot end a response`,
      { session_id: sessionId },
    );
  }
  const headers = new Headers(outcome.headers);
  const body = NO_BODY.has(outcome.status_code) ? null : outcome.body;
  if (body && !headers.has("content-type")) {
    headers.set("content-type", "text/plain; charset=utf-8");
  }
  return new Response(body, { status: outcome.status_code, headers });
}

/**
 * `ANY /webhooks/<webhook_id>[/<suffix>]`: stores the event, starts the trigger's session, and
 * answers 202 at once (asynchronous) or with the session's final outcome (synchronous).
 */
export function webhookRoutes(deps: WebhookDeps) {
  const handle = async (c: Context) => {
    const request = await readIngestRequest(c, deps);
    const plan = planIngest(request);
    const trigger = request.source.trigger;
    const key = deps.dedup?.keyOf(trigger, c.req.raw.headers);
    const delivery = key
      ? await deps.dedup!.begin(key, {
          event_id: plan.eventId,
          session_id: plan.sessionId,
          kind: plan.sync ? "sync" : "accepted",
        })
      : null;
    if (delivery && !delivery.first) return replayAnswer(c, delivery.record);
    const first = delivery?.first ? delivery : null;
    const accept = async () => {
      const { event, outcome } = await deps.sessions.ingest(request, plan).catch((err) => {
        if (err instanceof HooklineError && err.code === "unavailable")
          c.header("Retry-After", "1");
        throw err;
      });
      await first?.accepted();
      if (!outcome) return c.json({ event_id: event.id, session_id: event.session_id }, 202);
      const sync = { project: request.doc.project.name, trigger: trigger.name };
      c.set(SYNC_ANSWER as never, sync as never);
      const wait = await outcome(deps.syncTimeoutMs);
      const response = syncAnswer(wait, event.session_id!, deps.syncTimeoutMs);
      if (wait.kind === "outcome") await first?.answered(wait.outcome);
      return response;
    };
    if (!first) return accept();
    try {
      return await accept();
    } catch (err) {
      // Before the delivery was accepted nothing stays: a retry with the same key may go on.
      await first.failed().catch(() => {});
      throw err;
    }
  };
  return deliveryRoutes(handle);
}

/**
 * The delivery as an ingest request: resolves the webhook's address, then reads headers and
 * body within their limits (431, 413, 408 before anything is stored).
 */
async function readIngestRequest(
  c: Context,
  deps: WebhookDeps,
): Promise<IngestRequest & { source: { kind: "webhook" } }> {
  const id = c.req.param("id")!;
  const resolved = await deps.triggers.get(id);
  if (!resolved) throw new HooklineError("not_found", "no webhook at this address");
  const req = c.req.raw;
  const body = await readDelivery(c, deps);
  const data = buildWebhookData({
    method: req.method,
    url: new URL(req.url),
    headers: req.headers,
    body,
    webhookPrefix: `/webhooks/${id}`,
  });
  return {
    source: { kind: "webhook", trigger: resolved.trigger },
    doc: resolved.doc,
    deployment: { id: resolved.deploymentId, buildId: resolved.buildId },
    event: { type: req.method.toLowerCase(), data, webhook_id: id },
  };
}

/** A synchronous session's answer: its final outcome as the response, or why there is none. */
function syncAnswer(wait: OutcomeWait, sessionId: string, timeoutMs: number): Response {
  if (wait.kind === "outcome") return toResponse(wait.outcome, sessionId);
  if (wait.kind === "timeout") {
    throw new HooklineError(
      "timeout",
      `session ${sessionId} sent no final outcome within ${timeoutMs / 1000} s; it keeps running`,
      { session_id: sessionId },
    );
  }
  throw new HooklineError(
    "bad_gateway",
    `session ${sessionId} ended (${wait.session.state}) without a final outcome`,
    { session_id: sessionId, state: wait.session.state },
  );
}
