import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type Metric,
  Registry,
} from "prom-client";
import type { SessionRecord } from "../model/records.ts";

/** What the service counts at scrape time (queue, processes); each part may be absent. */
export interface MetricSources {
  /** Sessions alive on this instance (running or waiting for a process) and parked ones. */
  sessions?: () => { live: number; parked: number };
  /** The Python runtime: sessions waiting for a process, the limits, warm servers and spares. */
  runtime?: () => RuntimeGauges | null;
}

export interface RuntimeGauges {
  running: number;
  waiting: number;
  maxRunning: number;
  maxWaiting: number;
  warmServers: number;
  spareProcesses: number;
}

/** Seconds: from a webhook's few milliseconds to a long workflow. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Storage calls: sub-millisecond on LMDB, a network round trip on Redis or PostgreSQL. */
const STORAGE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

/**
 * prom-client's default gauges whose names end in `_total`: Prometheus reserves the suffix for
 * counters and Debian's `promtool check metrics` refuses them. The per-type gauges
 * (`nodejs_active_handles{type}`, …) stay.
 */
const MISNAMED_DEFAULTS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/**
 * Node's own metrics (prom-client's defaults), collected once per process: several apps in one
 * process (the tests) share them rather than each starting its own event-loop and GC monitors.
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    for (const name of MISNAMED_DEFAULTS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/**
 * The service's Prometheus metrics, one registry per app (several apps share a test process).
 * Labels are bounded: project and trigger names, states, statuses, reasons; never a session id.
 * @example const m = createMetrics(); m.sessionStarted(record); await m.registry.metrics();
 */
export function createMetrics(sources: MetricSources = {}) {
  const registry = new Registry();
  const reg = <T extends Metric>(m: T) => {
    registry.registerMetric(m);
    return m;
  };

  const started = reg(
    new Counter({
      name: "hookline_sessions_started_total",
      help: "Sessions started on this instance.",
      labelNames: ["project", "trigger"],
      registers: [],
    }),
  );
  const ended = reg(
    new Counter({
      name: "hookline_sessions_ended_total",
      help: "Sessions that ended on this instance, by final state (completed, error, stopped).",
      labelNames: ["project", "trigger", "state"],
      registers: [],
    }),
  );
  const duration = reg(
    new Histogram({
      name: "hookline_session_duration_seconds",
      help: "From a session's creation to its end.",
      labelNames: ["project", "trigger", "state"],
      buckets: DURATION_BUCKETS,
      registers: [],
    }),
  );
  const sync = reg(
    new Histogram({
      name: "hookline_sync_response_seconds",
      help: "How long a synchronous webhook request was held until its answer.",
      labelNames: ["project", "trigger", "status"],
      buckets: DURATION_BUCKETS,
      registers: [],
    }),
  );
  const activity = reg(
    new Histogram({
      name: "hookline_activity_duration_seconds",
      help: "Activities as Python timed them, by function and result (ok, error).",
      labelNames: ["project", "function", "result"],
      buckets: DURATION_BUCKETS,
      registers: [],
    }),
  );
  const step = reg(
    new Histogram({
      name: "hookline_step_duration_seconds",
      help: "Steps the service served for a session (subscribe, next_event, sleep, outcome, store, …), waits included.",
      labelNames: ["project", "kind", "result"],
      buckets: DURATION_BUCKETS,
      registers: [],
    }),
  );
  const webhook = reg(
    new Counter({
      name: "hookline_webhook_responses_total",
      help: "Answers to webhook requests, by HTTP status.",
      labelNames: ["status"],
      registers: [],
    }),
  );
  const deduplicated = reg(
    new Counter({
      name: "hookline_webhook_deduplicated_total",
      help: "Repeated webhook deliveries answered from the first one (Idempotent-Replayed).",
      registers: [],
    }),
  );
  const storage = reg(
    new Histogram({
      name: "hookline_storage_operation_seconds",
      help: "Storage calls, by operation and result (ok, error).",
      labelNames: ["op", "result"],
      buckets: STORAGE_BUCKETS,
      registers: [],
    }),
  );
  const refused = reg(
    new Counter({
      name: "hookline_connection_refused_total",
      help: "Inbound connection deliveries refused, by integration and reason.",
      labelNames: ["integration", "reason"],
      registers: [],
    }),
  );
  gauge(
    registry,
    "hookline_sessions_live",
    "Sessions alive here (running, or waiting for a process).",
    () => sources.sessions?.().live,
  );
  gauge(
    registry,
    "hookline_sessions_parked",
    "Durable sessions waiting without a process (parked).",
    () => sources.sessions?.().parked,
  );
  gauge(
    registry,
    "hookline_queue_depth",
    "Sessions waiting for a Python process slot.",
    () => sources.runtime?.()?.waiting,
  );
  gauge(
    registry,
    "hookline_queue_limit",
    "Sessions that may wait for a slot; past it a session is refused.",
    () => sources.runtime?.()?.maxWaiting,
  );
  gauge(
    registry,
    "hookline_admission_limit",
    "Python processes that run at once (SVC_MAX_SESSIONS).",
    () => sources.runtime?.()?.maxRunning,
  );
  gauge(
    registry,
    "hookline_python_running",
    "Sessions whose Python process runs now.",
    () => sources.runtime?.()?.running,
  );
  gauge(
    registry,
    "hookline_python_warm_servers",
    "Deployment-warm Python fork servers kept.",
    () => sources.runtime?.()?.warmServers,
  );
  gauge(
    registry,
    "hookline_python_spare_processes",
    "Python processes forked ahead, waiting for a session.",
    () => sources.runtime?.()?.spareProcesses,
  );

  const seconds = (from: string, to: string | null) =>
    Math.max(0, (Date.parse(to ?? new Date().toISOString()) - Date.parse(from)) / 1000);
  return {
    registry,
    /** The text `/metrics` answers: this app's metrics and the process's. */
    text: () => Registry.merge([registry, processMetrics()]).metrics(),
    contentType: registry.contentType,
    sessionStarted(r: SessionRecord): void {
      started.inc({ project: r.project_name, trigger: r.trigger_name });
    },
    sessionEnded(r: SessionRecord): void {
      const labels = { project: r.project_name, trigger: r.trigger_name, state: r.state };
      ended.inc(labels);
      duration.observe(labels, seconds(r.created_at, r.ended_at));
    },
    syncAnswered(project: string, trigger: string, status: number, secs: number): void {
      sync.observe({ project, trigger, status: String(status) }, secs);
    },
    activity(project: string, fn: string, ok: boolean, ms: number): void {
      activity.observe({ project, function: fn, result: ok ? "ok" : "error" }, ms / 1000);
    },
    step(project: string, kind: string, ok: boolean, ms: number): void {
      step.observe({ project, kind, result: ok ? "ok" : "error" }, ms / 1000);
    },
    webhookAnswered(status: number, replayed: boolean): void {
      webhook.inc({ status: String(status) });
      if (replayed) deduplicated.inc();
    },
    storageCall(op: string, ok: boolean, ms: number): void {
      storage.observe({ op, result: ok ? "ok" : "error" }, ms / 1000);
    },
    /**
     * A connection's inbound delivery was refused (bad signature, unknown connection, …).
     * Reasons are a fixed set chosen by the caller, never request data.
     * @example metrics.connectionRefused("github", "bad_signature")
     */
    connectionRefused(integration: string, reason: string): void {
      refused.inc({ integration, reason });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** A gauge read when scraped; a source that is absent leaves it out of the answer. */
function gauge(registry: Registry, name: string, help: string, read: () => number | undefined) {
  registry.registerMetric(
    new Gauge({
      name,
      help,
      registers: [],
      collect() {
        const v = read();
        if (v === undefined) this.reset();
        else this.set(v);
      },
    }),
  );
}
