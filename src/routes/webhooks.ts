import { Hono } from "hono";
import { HooklineError } from "../errors.ts";
import { buildWebhookData } from "../events/data.ts";
import { compileFilter } from "../events/filter.ts";
import { newId } from "../ids.ts";
import type { EventRecord, Outcome } from "../model/records.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Stores } from "../storage/stores.ts";
import type { TriggerCache } from "./trigger-cache.ts";

/** Request headers larger than this (names and values) are refused with 431. */
export const MAX_HEADER_BYTES = 64 * 1024;

export interface WebhookDeps {
  stores: Stores;
  triggers: TriggerCache;
  sessions: SessionManager;
  maxBody: number;
  syncTimeoutMs: number;
  /** Told after each stored event (retention counts them). */
  onEvent?: () => void;
}

/** Reads the body, refusing (413) past `max` bytes without buffering the excess. */
async function readBody(req: Request, max: number): Promise<Uint8Array> {
  const length = req.headers.get("content-length");
  const declared = Number(length ?? "0");
  if (declared > max) throw tooLarge(max);
  // A declared length bounds the read (HTTP framing holds the client to it): take the adapter's
  // fast path, which skips building a web stream. Chunked bodies are read with a running cap.
  if (length !== null) return new Uint8Array(await req.arrayBuffer());
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

const tooLarge = (max: number) =>
  new HooklineError("payload_too_large", `the request body exceeds ${max} bytes`);

/** Statuses whose responses carry no body, whatever the handler gave. */
const NO_BODY = new Set([204, 205, 304]);

/** The final outcome as the HTTP response. */
function toResponse(outcome: Outcome, sessionId: string): Response {
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

function headerBytes(headers: Headers): number {
  let n = 0;
  for (const [k, v] of headers) n += k.length + v.length + 4;
  return n;
}

/**
 * `ANY /webhooks/<webhook_id>[/<suffix>]`: stores the event, starts the trigger's session, and
 * answers 202 at once (asynchronous) or with the session's final outcome (synchronous).
 */
export function webhookRoutes(deps: WebhookDeps) {
  const app = new Hono();
  const handle = async (c: import("hono").Context) => {
    const id = c.req.param("id")!;
    const resolved = await deps.triggers.get(id);
    if (!resolved) throw new HooklineError("not_found", "no webhook at this address");
    const req = c.req.raw;
    if (headerBytes(req.headers) > MAX_HEADER_BYTES) {
      throw new HooklineError("headers_too_large", "the request headers exceed 64 KiB");
    }
    const body = await readBody(req, deps.maxBody);
    const { doc, trigger } = resolved;
    const data = buildWebhookData({
      method: req.method,
      url: new URL(req.url),
      headers: req.headers,
      body,
      webhookPrefix: `/webhooks/${id}`,
    });
    const eventType = req.method.toLowerCase();
    const input = { data, event_type: eventType };
    const typeMatches = !trigger.event_type || trigger.event_type === eventType;
    const filter = trigger.filter ? compileFilter(trigger.filter) : null;
    const passes = typeMatches && (!filter || filter.matches(input));
    const startsSession = passes && trigger.call !== null;
    if (startsSession && !(await deps.sessions.canAccept(trigger.is_sync))) {
      c.header("Retry-After", "1");
      throw new HooklineError("unavailable", "too many sessions are waiting to run; retry later");
    }
    const event: EventRecord = {
      id: newId("evt"),
      project_id: doc.project.id,
      trigger_id: trigger.id,
      trigger_name: trigger.name,
      webhook_id: id,
      event_type: eventType,
      data,
      session_id: startsSession ? newId("ses") : null,
      created_at: new Date().toISOString(),
    };
    await deps.stores.events.put(event);
    deps.onEvent?.();
    // A call-less trigger's filter also gates what its subscribers get; a trigger with a call
    // hands every event of its webhook to subscribers, whose own filters decide.
    if (trigger.call !== null || passes) {
      deps.sessions.publishEvent(`${doc.project.id}:${trigger.name}`, {
        event_id: event.id,
        session_id: event.session_id,
        event_type: eventType,
        data,
      });
    }
    if (!event.session_id) {
      return c.json({ event_id: event.id, session_id: null }, 202);
    }
    // Synchronous: runs here, which holds the request. Asynchronous: wherever a slot is free.
    await deps.sessions.accept({
      sessionId: event.session_id,
      doc,
      trigger,
      deploymentId: resolved.deploymentId,
      buildId: resolved.buildId,
      event,
    });
    if (!trigger.is_sync) {
      return c.json({ event_id: event.id, session_id: event.session_id }, 202);
    }
    const wait = await deps.sessions.waitOutcome(event.session_id, deps.syncTimeoutMs);
    if (wait.kind === "outcome") return toResponse(wait.outcome, event.session_id);
    if (wait.kind === "timeout") {
      throw new HooklineError(
        "gateway_timeout",
        `session ${event.session_id} sent no final outcome within ${deps.syncTimeoutMs / 1000} s; it keeps running`,
        { session_id: event.session_id },
      );
    }
    throw new HooklineError(
      "bad_gateway",
      `session ${event.session_id} ended (${wait.session.state}) without a final outcome`,
      { session_id: event.session_id, state: wait.session.state },
    );
  };
  app.all("/:id", handle);
  app.all("/:id/*", handle);
  return app;
}
