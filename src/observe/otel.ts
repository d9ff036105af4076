// Imported only by loadTracing (tracing.ts), when the OTEL_* variables ask for traces. Here: the
// SDK set up, and the spans in the request being served (its own, slow storage calls); a
// session's spans and those under it are otel-sessions.ts's.
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { failSpan, type SpanParts, sessionSpans, stepSpans } from "./otel-sessions.ts";
import { requestRoute } from "./route.ts";
import type { Tracing } from "./tracing-api.ts";

/** The inbound request's span. */
function requestSpans({ tracer, active }: SpanParts): Pick<Tracing, "request"> {
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
        if (status >= 500) failSpan(span, String(status));
      } catch (err) {
        failSpan(span, err instanceof Error ? err.name : "Error");
        throw err;
      } finally {
        span.end();
      }
    },
  };
}

/** Spans of slow storage calls, under the request being served (if any). */
function storageSpans({ tracer, active, slowMs }: SpanParts): Pick<Tracing, "storageCall"> {
  return {
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
  const parts: SpanParts = {
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
    ...storageSpans(parts),
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
