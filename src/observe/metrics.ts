import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Histogram,
  Registry,
} from "prom-client";
import type { SessionRecord } from "../model/records.ts";
import { declareScraped, type MetricSources } from "./scraped-metrics.ts";

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

/** The metrics the app updates, declared in `registry`. */
function declare(registry: Registry) {
  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) =>
    new Histogram({ name, help, labelNames, buckets, registers: [registry] });
  const session = ["project", "trigger"];
  return {
    started: counter(
      "hookline_sessions_started_total",
      "Sessions started on this instance.",
      session,
    ),
    ended: counter(
      "hookline_sessions_ended_total",
      "Sessions that ended on this instance, by final state (completed, error, stopped).",
      [...session, "state"],
    ),
    duration: histogram(
      "hookline_session_duration_seconds",
      "From a session's creation to its end.",
      [...session, "state"],
      DURATION_BUCKETS,
    ),
    sync: histogram(
      "hookline_sync_response_seconds",
      "How long a synchronous webhook request was held until its answer.",
      [...session, "status"],
      DURATION_BUCKETS,
    ),
    activity: histogram(
      "hookline_activity_duration_seconds",
      "Activities as Python timed them, by function and result (ok, error).",
      ["project", "function", "result"],
      DURATION_BUCKETS,
    ),
    step: histogram(
      "hookline_step_duration_seconds",
      "Steps the service served for a session (subscribe, next_event, sleep, outcome, store, …), waits included.",
      ["project", "kind", "result"],
      DURATION_BUCKETS,
    ),
    webhook: counter(
      "hookline_webhook_responses_total",
      "Answers to webhook requests, by HTTP status.",
      ["status"],
    ),
    deduplicated: counter(
      "hookline_webhook_deduplicated_total",
      "Repeated webhook deliveries answered from the first one (Idempotent-Replayed).",
    ),
    storage: histogram(
      "hookline_storage_operation_seconds",
      "Storage calls, by operation and result (ok, error).",
      ["op", "result"],
      STORAGE_BUCKETS,
    ),
    refused: counter(
      "hookline_connection_refused_total",
      "Inbound connection deliveries refused, by integration and reason.",
      ["integration", "reason"],
    ),
  };
}

/** This registry's metrics with another thread's counters and histograms added to them. */
async function summed(registry: Registry, others: unknown[]): Promise<Registry> {
  const mine = await registry.getMetricsAsJSON();
  const theirs = others as typeof mine;
  return AggregatorRegistry.aggregate([mine, theirs]) as unknown as Registry;
}

/**
 * The service's Prometheus metrics, one registry per app (several apps share a test process):
 * the counters and histograms the service updates as things happen, declared here; the gauges
 * read from `sources` when scraped (scraped-metrics.ts); Node's own, shared by the process.
 * Labels are bounded: project and trigger names, states, statuses, reasons; never a session id.
 * @example const m = createMetrics(); m.sessionStarted(record); await m.text();
 */
export function createMetrics(sources: MetricSources = {}) {
  const registry = new Registry();
  const m = declare(registry);
  const retries = new Counter({
    name: "hookline_activity_retries_total",
    help: "Activity attempts that failed and were tried again under a retry policy.",
    labelNames: ["project", "trigger"],
    registers: [registry],
  });
  declareScraped(registry, sources);
  const seconds = (from: string, to: string | null) =>
    Math.max(0, (Date.parse(to ?? new Date().toISOString()) - Date.parse(from)) / 1000);
  const result = (ok: boolean) => (ok ? "ok" : "error");
  // A storage call is timed on every call: its labelled child is found once, not per call.
  const storageChildren = new Map<string, ReturnType<typeof m.storage.labels>>();
  const storageChild = (op: string, ok: boolean) => {
    const key = ok ? op : `${op}!`;
    let child = storageChildren.get(key);
    if (!child) {
      child = m.storage.labels({ op, result: result(ok) });
      storageChildren.set(key, child);
    }
    return child;
  };
  return {
    registry,
    /** The text `/metrics` answers: this app's metrics (and another thread's) and the process's. */
    async text(): Promise<string> {
      const others = (await sources.elsewhere?.()) ?? [];
      const mine = others.length === 0 ? registry : await summed(registry, others);
      return Registry.merge([mine, processMetrics()]).metrics();
    },
    /** The counters and histograms that have values, as JSON: what another thread sums in. */
    async json(): Promise<unknown[]> {
      const all = await registry.getMetricsAsJSON();
      return all.filter((m) => String(m.type) !== "gauge" && m.values.length > 0);
    },
    contentType: registry.contentType,
    sessionStarted(r: SessionRecord): void {
      m.started.inc({ project: r.project_name, trigger: r.trigger_name });
    },
    sessionEnded(r: SessionRecord): void {
      const labels = { project: r.project_name, trigger: r.trigger_name, state: r.state };
      m.ended.inc(labels);
      m.duration.observe(labels, seconds(r.created_at, r.ended_at));
    },
    syncAnswered(project: string, trigger: string, status: number, secs: number): void {
      m.sync.observe({ project, trigger, status: String(status) }, secs);
    },
    activity(project: string, fn: string, ok: boolean, ms: number): void {
      m.activity.observe({ project, function: fn, result: result(ok) }, ms / 1000);
    },
    /** An activity's attempt failed and its retry policy tries it again. */
    retried(project: string, trigger: string): void {
      retries.inc({ project, trigger });
    },
    step(project: string, kind: string, ok: boolean, ms: number): void {
      m.step.observe({ project, kind, result: result(ok) }, ms / 1000);
    },
    webhookAnswered(status: number, replayed: boolean): void {
      m.webhook.inc({ status: String(status) });
      if (replayed) m.deduplicated.inc();
    },
    storageCall(op: string, ok: boolean, ms: number): void {
      storageChild(op, ok).observe(ms / 1000);
    },
    /**
     * A connection's inbound delivery was refused (bad signature, unknown connection, …).
     * Reasons are a fixed set chosen by the caller, never request data.
     * @example metrics.connectionRefused("github", "bad_signature")
     */
    connectionRefused(integration: string, reason: string): void {
      m.refused.inc({ integration, reason });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
