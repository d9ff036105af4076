import type { Context as HonoContext, Next } from "hono";
import type { ActivityReport, SessionRecord } from "../model/records.ts";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";

/**
 * The service's spans, as the rest of the code sees them. Only `loadTracing` knows that
 * OpenTelemetry is behind it, and imports it only when the `OTEL_*` variables ask for traces:
 * without them nothing is loaded and every caller holds `null`.
 */
export interface Tracing {
  /** Hono middleware: the inbound request's span (parent: the request's W3C `traceparent`). */
  request(c: HonoContext, next: Next): Promise<void>;
  /**
   * A session started: its span (child of the request being served, or, for a session started
   * by another with `start()`, a new trace linked to `parent`). Returns its `traceparent`.
   */
  sessionStarted(record: SessionRecord, parent: string | undefined): string;
  /** The session's `traceparent`, if it has a span here (null: none). */
  traceparent(sessionId: string): string | null;
  sessionEnded(record: SessionRecord): void;
  /** An activity ended (Python timed it): a span under the session's, placed back in time. */
  activity(sessionId: string, report: ActivityReport): void;
  /** A step the service serves (a wait, an outcome, a durable step): a span around it. */
  step(sessionId: string, req: StepRequest, serve: () => Promise<StepReply>): Promise<StepReply>;
  /** A storage call ended; a span is made only above the slow-call threshold. */
  storageCall(op: string, startedAtMs: number, ms: number, ok: boolean): void;
  /** The span active where this is called (log lines carry it), or null. */
  current(): { trace_id: string; span_id: string } | null;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}
