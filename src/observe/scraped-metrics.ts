import { Counter, Gauge, type Registry } from "prom-client";
import type { RuntimeGauges } from "../runtime/runtime.ts";

/** What the service counts at scrape time (queue, processes); each part may be absent. */
export interface MetricSources {
  /** Sessions alive on this instance (running or waiting for a process) and parked ones. */
  sessions?: () => { live: number; parked: number };
  /** The Python runtime: sessions waiting for a process, the limits, warm servers and spares. */
  runtime?: () => RuntimeGauges | null;
  /**
   * Counters and histograms another thread of this process keeps (the front door's: the
   * webhooks it answered, its storage calls), as prom-client's JSON: summed into these.
   */
  elsewhere?: () => Promise<unknown[]>;
}

/**
 * Declares in `registry` the gauges (and the runtime's own counters) read at scrape time from
 * what the service counts; a source that is absent leaves its metrics out of the answer.
 * @example declareScraped(registry, { sessions: () => ({ live: 2, parked: 0 }) });
 */
export function declareScraped(registry: Registry, sources: MetricSources): void {
  const g = (name: string, help: string, read: () => number | undefined) =>
    gauge(registry, name, help, read);
  const rt = () => sources.runtime?.() ?? undefined;
  g(
    "hookline_sessions_live",
    "Sessions alive here (running, or waiting for a process).",
    () => sources.sessions?.().live,
  );
  g(
    "hookline_sessions_parked",
    "Durable sessions waiting without a process (parked).",
    () => sources.sessions?.().parked,
  );
  g("hookline_queue_depth", "Sessions waiting for a Python process slot.", () => rt()?.waiting);
  g(
    "hookline_queue_limit",
    "Sessions that may wait for a slot; past it a session is refused.",
    () => rt()?.maxWaiting,
  );
  g(
    "hookline_admission_limit",
    "Python processes that run at once (SVC_MAX_SESSIONS).",
    () => rt()?.maxRunning,
  );
  g("hookline_python_running", "Sessions whose Python process runs now.", () => rt()?.running);
  g(
    "hookline_python_warm_servers",
    "Deployment-warm Python fork servers kept.",
    () => rt()?.warmServers,
  );
  g(
    "hookline_python_spare_processes",
    "Python processes forked ahead, waiting for a session.",
    () => rt()?.spareProcesses,
  );
  g(
    "hookline_python_idle_reused_processes",
    "Python processes of reuse_process triggers kept idle for their trigger's next session.",
    () => rt()?.idleReusedProcesses,
  );
  counted(
    registry,
    "hookline_python_reuse_sessions_total",
    "Sessions of reuse_process triggers, by the process they ran on: reused (an earlier session's) or fresh.",
    "process",
    () => rt()?.reuseSessions,
  );
}

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

/**
 * A counter the runtime keeps, read when scraped, one series per key of what `read` returns
 * (`label` names the key); a source that is absent leaves it out of the answer.
 */
function counted(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  read: () => Record<string, number> | undefined,
) {
  registry.registerMetric(
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [],
      collect() {
        this.reset();
        for (const [key, n] of Object.entries(read() ?? {})) this.inc({ [label]: key }, n);
      },
    }),
  );
}
