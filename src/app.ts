import { Hono } from "hono";
import type { Storage } from "unstorage";
import {
  answerErrors,
  apiRoutes,
  appDeduper,
  mountService,
  mountUi,
  projectChanges,
  sessionOptions,
} from "./app-parts.ts";
import { type Cluster, localCluster } from "./cluster/cluster.ts";
import { createReadiness } from "./deploy/readiness.ts";
import { createProjectStore } from "./kv/project-kv.ts";
import { keyedLock } from "./locks.ts";
import { type Logger, silentLogger } from "./log.ts";
import { createObserver } from "./observe/observer.ts";
import type { Tracing } from "./observe/tracing.ts";
import { createTriggerCache } from "./routes/trigger-cache.ts";
import type { Runtime } from "./runtime/runtime.ts";
import type { SecretBox } from "./secrets.ts";
import { SessionManager } from "./sessions/manager.ts";
import { createStores } from "./storage/records.ts";
import { createPruner, type RetentionLimits } from "./storage/retention.ts";
import { guardStorage } from "./storage/unavailable.ts";

export interface AppOptions {
  storage: Storage;
  runtime: Runtime;
  secrets: SecretBox;
  /** Required on `/api` unless undefined (dev mode). */
  apiToken?: string;
  log?: Logger;
  maxBody?: number;
  syncTimeoutMs?: number;
  workflowTimeoutMs?: number;
  maxActiveSessions?: number;
  /** Sessions running here before this instance stops taking shared (queued) ones. */
  sessionSlots?: number;
  /** See SessionLimits.evictAfterMs (src/sessions/core.ts). */
  evictAfterMs?: number;
  /** The other instances (Redis), if any. */
  cluster?: Cluster;
  /** See SessionLimits.sweepMs. */
  sweepMs?: number;
  /** Webhook body read timeout, ms (default 30 s). */
  bodyTimeoutMs?: number;
  /** Repeated deliveries: how long keys are kept, ms (default 24 h), and Redis to share them. */
  dedup?: { windowMs: number; redis?: { url: string; base: string } | null };
  /** How much history storage keeps (default: 10,000 sessions a project, 100,000 events). */
  retention?: RetentionLimits;
  /** The URL `storage` was made from (`redis://…` makes the project store use Redis). */
  storageUrl?: string;
  /** The service's external base URL, for `get_webhook_url` and published store values. */
  publicUrl?: () => string;
  /** Told when a project's configuration changed, here or on another instance (the scheduler). */
  onChanged?: (projectId: string) => void;
  /** Spans (OpenTelemetry, from `loadTracing`); null or absent: none. See docs/observability.md. */
  tracing?: Tracing | null;
  /** What the Python runtime counts (queue, warm servers), for `/metrics`. */
  runtimeGauges?: import("./observe/metrics.ts").MetricSources["runtime"];
}

/**
 * The service as a Hono app: webhooks, the management API, health. The same app runs in the
 * emulator and in the container; `sessions.recover()` resumes work after a restart.
 * @example const { app } = createApp({ storage, runtime, secrets }); await app.request("/healthz")
 */
export function createApp(opts: AppOptions) {
  const log = opts.log ?? silentLogger;
  const sources = {
    runtime: opts.runtimeGauges,
    sessions: () => ({ live: sessions.activeCount, parked: 0 }),
  };
  const observer = createObserver({ tracing: opts.tracing ?? null, log, sources });
  const stores = createStores(guardStorage(opts.storage, observer.storageCall));
  const cluster = opts.cluster ?? localCluster();
  const retention = opts.retention ?? { sessionsPerProject: 10_000, events: 100_000 };
  const pruner = createPruner(stores, retention, log);
  const store = createProjectStore({
    storage: opts.storage,
    storageUrl: opts.storageUrl ?? "memory:",
  });
  const sessionParts = { stores, observer, log, cluster, pruner, store };
  const sessions = new SessionManager(sessionOptions(opts, sessionParts));
  sessions.onStarted(observer.sessionStarted);
  // Not ready until the Python environment and the active deployments are prepared (`start()`,
  // called by the platform); a change of a project prepares its deployment on every instance.
  const readiness = createReadiness({ stores, runtime: opts.runtime, secrets: opts.secrets, log });
  // Shared: invalidations arrive at least once, but a Redis restart loses them: entries also age out.
  const triggers = createTriggerCache(stores, cluster.shared ? 5000 : 0);
  const locks = keyedLock();
  const dedup = appDeduper(opts.storage, opts.dedup);
  const { onChanged } = opts;
  const { changed, unsubscribe } = projectChanges({ cluster, triggers, readiness, onChanged });

  const app = new Hono();
  app.use("*", observer.middleware);
  answerErrors(app, log);
  mountService(app, {
    ...opts,
    observer,
    readiness,
    sessions,
    store,
    triggers,
    stores,
    dedup,
    log,
  });
  app.route("/api/v1", apiRoutes({ ...opts, stores, sessions, store, locks, changed }));
  // The web UI reads the service through one adapter (src/ui/service-adapter.ts).
  const ui = mountUi(app, { ...opts, stores, sessions, cluster, log });
  return {
    app,
    stores,
    sessions,
    pruner,
    readiness,
    store,
    /** `/metrics`'s counters: `metrics.connectionRefused(integration, reason)` and the rest. */
    metrics: observer.metrics,
    observer,
    async dispose() {
      unsubscribe();
      await ui.dispose?.();
      await sessions.dispose();
      await store.dispose();
      await pruner.idle();
      await dedup.dispose();
      if (!opts.cluster) await cluster.dispose();
      await observer.dispose();
    },
  };
}

export type HooklineApp = ReturnType<typeof createApp>;
