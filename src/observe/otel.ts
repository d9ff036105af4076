// Imported only by loadTracing (tracing.ts), when the OTEL_* variables ask for traces.
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";
import { requestRoute } from "./route.ts";
import type { Tracing } from "./tracing-api.ts";

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

/** What the span makers share: the tracer, the request being served, sessions' open spans. */
interface Parts {
  tracer: Tracer;
  active: AsyncLocalStorage<Context>;
  sessions: Map<string, Span>;
  slowMs: number;
}

/** The inbound request's span. */
function requestSpans({ tracer, active }: Parts): Pick<Tracing, "request"> {
  return {
    async request(c, next) {
      const header = c.req.header("traceparent");
      const remote = header ? parseTraceParent(header) : null;
      const parent = remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
      const method = c.req.method;
      const url = new URL(c.req.url);
      const route = requestRoute(url.pathname);
      const span = tracer.startSpan(
        route ? `${method} ${route}` : method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            "http.request.method": method,
            "url.scheme": url.protocol.replace(":", ""),
            // The route, never the path: a webhook's path is its secret capability.
            ...(route ? { "http.route": route, "url.path": route } : {}),
            "server.address": url.hostname,
            ...(url.port ? { "server.port": Number(url.port) } : {}),
            ...(c.req.header("user-agent")
              ? { "user_agent.original": c.req.header("user-agent") }
              : {}),
          },
        },
        parent,
      );
      try {
        await active.run(trace.setSpan(parent, span), next);
        const status = c.res.status;
        span.setAttribute("http.response.status_code", status);
        if (status >= 500) {
          span.setAttribute("error.type", String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      } catch (err) {
        span.setAttribute("error.type", err instanceof Error ? err.name : "Error");
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    },
  };
}

/** The session's span: begun at its start, ended with its final state. */
function sessionSpans({
  tracer,
  active,
  sessions,
}: Parts): Pick<Tracing, "sessionStarted" | "traceparent" | "sessionEnded"> {
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

/** Spans under a session (activities, steps, waits, outcomes) and of slow storage calls. */
function stepSpans({
  tracer,
  active,
  sessions,
  slowMs,
}: Parts): Pick<Tracing, "activity" | "step" | "storageCall"> {
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
      if (!report.ok) {
        span.setAttribute("error.type", errorType(report.error));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end(end);
    },

    async step(sessionId, req, serve): Promise<StepReply> {
      const ctx = sessionContext(sessionId);
      if (!ctx) return serve();
      const span = tracer.startSpan(stepName(req), { attributes: stepAttributes(req) }, ctx);
      try {
        const reply = await serve();
        if (!reply.ok) {
          span.setAttribute("error.type", reply.error);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return reply;
      } catch (err) {
        span.setAttribute("error.type", err instanceof Error ? err.name : "Error");
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    },

    storageCall(op, startedAtMs, ms, ok) {
      if (ms < slowMs) return;
      const span = tracer.startSpan(
        `storage ${op}`,
        {
          startTime: startedAtMs,
          attributes: { "hookline.storage.op": op, "hookline.storage.duration_ms": ms },
        },
        active.getStore() ?? ROOT_CONTEXT,
      );
      if (!ok) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(startedAtMs + ms);
    },
  };
}

/**
 * Spans over OpenTelemetry's SDK, exported with OTLP/HTTP (JSON) to the endpoint the standard
 * variables name; sampler, batching and resource come from them too (`OTEL_TRACES_SAMPLER`,
 * `OTEL_BSP_*`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`). Nothing global is registered:
 * contexts travel explicitly, and in one AsyncLocalStorage for the request being served.
 * @example const tracing = createOtelTracing(process.env);
 */
export function createOtelTracing(env: NodeJS.ProcessEnv): Tracing {
  const resource = resourceFromAttributes({ "service.name": "hookline" }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const parts: Parts = {
    tracer: provider.getTracer("hookline"),
    active: new AsyncLocalStorage<Context>(),
    sessions: new Map<string, Span>(),
    slowMs: Number(env.SVC_TRACE_STORAGE_MS ?? 50),
  };
  const { active, sessions } = parts;
  return {
    ...requestSpans(parts),
    ...sessionSpans(parts),
    ...stepSpans(parts),
    current() {
      const ctx = active.getStore();
      const sc = ctx ? trace.getSpanContext(ctx) : undefined;
      return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : null;
    },
    async shutdown() {
      for (const span of sessions.values()) span.end();
      sessions.clear();
      await provider.shutdown();
    },
  };
}
