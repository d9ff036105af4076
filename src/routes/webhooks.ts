import { HooklineError } from "../errors.ts";
import { buildWebhookData } from "../events/data.ts";
import type { Outcome } from "../model/records.ts";
import type { Delivery, OutcomeWait } from "../sessions/manager.ts";
import type { ResolvedAddress } from "./address-cache.ts";
import { webhookDedupKey } from "./dedup.ts";
import {
  type DeliveryContext,
  type DeliveryDeps,
  type DeliveryRoute,
  deliveryRoutes,
} from "./delivery.ts";
import { checkOutcome, replayAnswer } from "./outcome-check.ts";
import { requestHeaders } from "./request-headers.ts";

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
 * `ANY /webhooks/<webhook_id>[/<suffix>]`, taken as every delivery is (delivery.ts): the event
 * is the request, for the webhook's trigger; answered 202 at once (asynchronous) or with the
 * session's final outcome (synchronous, waited for up to `syncTimeoutMs`). A repeat of a
 * delivery (Idempotency-Key, Webhook-Id, the trigger's dedup_header) gets the first one's answer.
 * @example app.route("/webhooks", webhookRoutes(deps, 30_000));
 */
export function webhookRoutes(deps: DeliveryDeps, syncTimeoutMs: number) {
  return deliveryRoutes(webhookRoute(syncTimeoutMs), deps);
}

/** What a webhook's delivery is, and how it is answered. */
function webhookRoute(syncTimeoutMs: number): DeliveryRoute {
  return {
    unknown: "no webhook at this address",
    serves: (address) => address.trigger !== null,
    take(c, address, body) {
      const trigger = address.trigger!;
      const delivery = webhookDelivery(c, address, body);
      return { delivery, key: webhookDedupKey(trigger, c.req.raw.headers) };
    },
    async answer(c, address, [done], claim) {
      const { event, outcome } = done!;
      if (!outcome) return c.json({ event_id: event.id, session_id: event.session_id }, 202);
      c.set("syncAnswer", { project: address.doc.project.name, trigger: event.trigger_name });
      const wait = await outcome(syncTimeoutMs);
      const response = syncAnswer(wait, event.session_id!, syncTimeoutMs);
      if (wait.kind === "outcome") await claim?.answered(wait.outcome);
      return response;
    },
    replay: (c, _address, record) => replayAnswer(c, record),
  };
}

/** The request as the webhook's event: its data, for its trigger, on the active deployment. */
function webhookDelivery(c: DeliveryContext, address: ResolvedAddress, body: Uint8Array): Delivery {
  const id = c.req.param("id")!;
  const req = c.req.raw;
  const data = buildWebhookData({
    method: req.method,
    url: new URL(req.url),
    headers: requestHeaders(c),
    body,
    webhookPrefix: `/webhooks/${id}`,
  });
  return {
    source: { kind: "webhook", trigger: address.trigger! },
    doc: address.doc,
    deployment: { id: address.deploymentId, buildId: address.buildId },
    events: [{ type: req.method.toLowerCase(), data, webhook_id: id }],
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
