// Imported only by otel.ts: loaded with it, when the OTEL_* variables ask for traces.
import type { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";
import type { Tracing } from "./tracing-api.ts";

/**
 * What the span makers share: the tracer, the request being served, sessions' open spans, and
 * the storage call duration (ms) past which a call gets a span.
 */
export interface SpanParts {
  tracer: Tracer;
  active: AsyncLocalStorage<Context>;
  sessions: Map<string, Span>;
  slowMs: number;
}

/** Sessions with a span open here at once; past it a new session gets none (its log says so). */
const MAX_OPEN_SESSIONS = 100_000;

function traceparentOf(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 1).toString(16).padStart(2, "0")}`;
}

/** The exception's class from an activity's error text (`ValueError: …`); never its message. */
function errorType(text: string | undefined): string {
  const m = /^([A-Za-z_][\w.]*)(?::|$)/.exec(text?.trim() ?? "");
  return m ? m[1]! : "Error";
}

/** Step kinds that wait for the outside world: their spans are named `wait <kind>`. */
const WAITS = new Set(["next_event", "next_signal", "sleep"]);

function stepName(req: StepRequest): string {
  if (WAITS.has(req.kind)) return `wait ${req.kind}`;
  if (req.kind === "activity") return `step activity ${req.function}`;
  return req.kind === "outcome" ? "outcome" : `step ${req.kind}`;
}

function stepAttributes(req: StepRequest): Attributes {
  const a: Attributes = { "hookline.step.kind": req.kind };
  if (req.seq !== undefined) a["hookline.step.seq"] = req.seq;
  if (req.kind === "activity") a["hookline.activity.function"] = req.function;
  if (req.kind === "next_event") a["hookline.wait.subscriptions"] = req.ids.length;
  if (req.kind === "subscribe") a["hookline.subscription.source"] = req.name;
  if (req.kind === "outcome") {
    a["http.response.status_code"] = req.outcome.status_code;
    a["hookline.outcome.more"] = req.outcome.more;
  }
  return a;
}

/** The session's span: begun at its start, ended with its final state. */
export function sessionSpans({
  tracer,
  active,
  sessions,
}: SpanParts): Pick<Tracing, "sessionStarted" | "traceparent" | "sessionEnded"> {
  return {
    sessionStarted(record, parent) {
      const linked = parent ? parseTraceParent(parent) : null;
      const links: Link[] = linked
        ? [{ context: linked, attributes: { "hookline.link": "parent_session" } }]
        : [];
      // A session started by another has a trace of its own, linked to its parent's.
      const ctx = record.parent_id ? ROOT_CONTEXT : (active.getStore() ?? ROOT_CONTEXT);
      const span = tracer.startSpan(
        "session",
        {
          root: Boolean(record.parent_id),
          links,
          attributes: {
            "hookline.project": record.project_name,
            "hookline.trigger": record.trigger_name,
            "hookline.session.id": record.id,
            "hookline.session.durable": record.durable,
            "hookline.session.sync": record.is_sync,
            "hookline.session.entry": record.entry,
            ...(record.parent_id ? { "hookline.session.parent_id": record.parent_id } : {}),
          },
        },
        ctx,
      );
      if (sessions.size < MAX_OPEN_SESSIONS) sessions.set(record.id, span);
      else span.end();
      return traceparentOf(span.spanContext());
    },

    traceparent(sessionId) {
      const span = sessions.get(sessionId);
      return span ? traceparentOf(span.spanContext()) : null;
    },

    sessionEnded(record) {
      const span = sessions.get(record.id);
      if (!span) return;
      sessions.delete(record.id);
      span.setAttribute("hookline.session.state", record.state);
      span.setAttribute("hookline.session.attempts", record.attempts);
      if (record.state === "error") {
        // The message is the redacted one the record keeps; never the traceback.
        span.setStatus({ code: SpanStatusCode.ERROR, message: record.error?.message });
      }
      span.end();
    },
  };
}

/** Marks a span failed, `type` its OpenTelemetry `error.type`. */
export function failSpan(span: Span, type: string): void {
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Spans under a session's: activities, steps, waits, outcomes. */
export function stepSpans({ tracer, sessions }: SpanParts): Pick<Tracing, "activity" | "step"> {
  const sessionContext = (id: string) => {
    const span = sessions.get(id);
    return span ? trace.setSpan(ROOT_CONTEXT, span) : null;
  };
  return {
    activity(sessionId, report) {
      const ctx = sessionContext(sessionId);
      if (!ctx) return;
      const end = Date.now();
      const span = tracer.startSpan(
        `activity ${report.function}`,
        {
          startTime: end - report.duration_ms,
          attributes: {
            "hookline.activity.function": report.function,
            "hookline.activity.duration_ms": report.duration_ms,
          },
        },
        ctx,
      );
      if (!report.ok) failSpan(span, errorType(report.error));
      span.end(end);
    },

    async step(sessionId, req, serve): Promise<StepReply> {
      const ctx = sessionContext(sessionId);
      if (!ctx) return serve();
      const span = tracer.startSpan(stepName(req), { attributes: stepAttributes(req) }, ctx);
      try {
        const reply = await serve();
        if (!reply.ok) failSpan(span, reply.error);
        return reply;
      } catch (err) {
        failSpan(span, err instanceof Error ? err.name : "Error");
        throw err;
      } finally {
        span.end();
      }
    },
  };
}
