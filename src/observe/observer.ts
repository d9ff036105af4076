import type { Context as HonoContext, Next } from "hono";
import type { Logger } from "../log.ts";
import type { SessionRecord } from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { CallWatcher } from "../storage/unavailable.ts";
import { createMetrics } from "./metrics.ts";
import { observeRuntime } from "./runtime.ts";
import type { MetricSources } from "./scraped-metrics.ts";
import type { Tracing } from "./tracing.ts";

/** What a log line about a session carries (JSON logs). */
export interface SessionFields {
  session_id: string;
  project: string;
  trigger: string;
  trace_id?: string;
  span_id?: string;
}

/** Live sessions the directory remembers for log lines; past it, lines carry only what they say. */
const MAX_DIRECTORY = 100_000;

/** Paths whose requests get no span. */
const UNTRACED = new Set(["/metrics", "/healthz", "/readyz"]);

/**
 * What a request's handlers tell the observer's middleware, as typed Hono context variables.
 * A context flag rather than something read off the answer: reading `c.res.headers` turns the
 * answer's plain header object into a `Headers`, which costs every webhook answer a few
 * microseconds more to build and to write.
 */
export interface Observed {
  /** A held sync request: its answer is timed. */
  syncAnswer?: { project: string; trigger: string };
  /** A refused delivery of a connection's provider, counted. */
  refusedDelivery?: { integration: string; reason: string };
  /** A repeated webhook delivery answered from the first one, counted. */
  replayedDelivery?: true;
}

/** The Hono environment of routes whose requests the observer counts. */
export type ObservedEnv = { Variables: Observed };

/**
 * The service's metrics, traces and the facts log lines carry, in one place the app composes:
 * it wraps the runtime (activities, steps), storage (latency), requests (middleware), and is
 * told when sessions start and end. `tracing` null: no span is made, nothing of OpenTelemetry
 * is loaded; the metrics are always kept.
 * @example const obs = createObserver({ tracing: null, log }); app.use("*", obs.middleware);
 */
export function createObserver(opts: {
  tracing: Tracing | null;
  log: Logger;
  sources?: MetricSources;
}) {
  const { tracing, log } = opts;
  const metrics = createMetrics(opts.sources);
  const directory = new Map<string, SessionFields>();

  const remember = (record: SessionRecord, traceparent: string | undefined) => {
    if (directory.size >= MAX_DIRECTORY) return;
    const m = traceparent ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-/.exec(traceparent) : null;
    directory.set(record.id, {
      session_id: record.id,
      project: record.project_name,
      trigger: record.trigger_name,
      ...(m ? { trace_id: m[1]!, span_id: m[2]! } : {}),
    });
  };

  return {
    metrics,
    tracing,
    /** Hono middleware: webhook answers counted, sync answers timed, the request's span. */
    async middleware(c: HonoContext<ObservedEnv>, next: Next): Promise<void> {
      const t0 = performance.now();
      // Probes and scrapes come every few seconds: no span of their own.
      if (tracing && !UNTRACED.has(c.req.path)) await tracing.request(c, next);
      else await next();
      const refused = c.get("refusedDelivery");
      if (refused) metrics.connectionRefused(refused.integration, refused.reason);
      if (!c.req.path.startsWith("/webhooks/")) return;
      const status = c.res.status;
      metrics.webhookAnswered(status, c.get("replayedDelivery") === true);
      const sync = c.get("syncAnswer");
      if (sync)
        metrics.syncAnswered(sync.project, sync.trigger, status, (performance.now() - t0) / 1000);
    },
    /** The runtime, its sessions' activities and steps measured (and traced). */
    runtime: (runtime: Runtime) =>
      observeRuntime(runtime, metrics, tracing, (id) => directory.get(id)),
    /**
     * Told of each storage call as it settles (`guardStorage`'s watcher): timed into
     * `hookline_storage_operation_seconds` and, with tracing on, a span for a call slower than
     * the tracer's threshold. Keys never become labels.
     */
    storageCall: ((op, ok, t0) => {
      const ms = performance.now() - t0;
      metrics.storageCall(op, ok, ms);
      tracing?.storageCall(op, Date.now() - ms, ms, ok);
    }) satisfies CallWatcher,
    /**
     * A session started here: counted, its span begun (its `traceparent` kept on the record,
     * for the UI, the CLI and the session's Python environment).
     */
    sessionStarted(record: SessionRecord): void {
      metrics.sessionStarted(record);
      const parent = record.parent_id ? tracing?.traceparent(record.parent_id) : null;
      if (tracing) record.traceparent = tracing.sessionStarted(record, parent ?? undefined);
      remember(record, record.traceparent);
    },
    /** A session ended here: counted, timed, its span ended; a failed one is logged. */
    sessionEnded(record: SessionRecord): void {
      metrics.sessionEnded(record);
      if (!directory.has(record.id)) remember(record, record.traceparent);
      // Not its message: the log carries no user text. `cli session log` has the error.
      if (record.state === "error") log.warn(`session ${record.id} ended in error`);
      tracing?.sessionEnded(record);
      directory.delete(record.id);
    },
    /** The facts of a session running here, for a log line that names it. */
    session: (id: string): SessionFields | undefined => directory.get(id),
    /** The span active where a line is logged (a request being served). */
    current: () => tracing?.current() ?? null,
    dispose: () => tracing?.shutdown() ?? Promise.resolve(),
  };
}

export type Observer = ReturnType<typeof createObserver>;
