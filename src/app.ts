import { Hono } from "hono";
import type { Storage } from "unstorage";
import {
  answerErrors,
  apiRoutes,
  appDeduper,
  type DedupOptions,
  mountDeliveries,
  mountService,
  mountUi,
  projectChanges,
  type RequestLimits,
  sessionOptions,
} from "./app-parts.ts";
import { type Cluster, localCluster } from "./cluster/cluster.ts";
import { createReadiness } from "./deploy/readiness.ts";
import { createProjectKv } from "./kv/project-kv.ts";
import { keyedLock } from "./locks.ts";
import { type Logger, silentLogger } from "./log.ts";
import type { MetricSources } from "./observe/metrics.ts";
import { createObserver } from "./observe/observer.ts";
import type { Tracing } from "./observe/tracing.ts";
import { createTriggerCache } from "./routes/trigger-cache.ts";
import type { Runtime } from "./runtime/runtime.ts";
import type { SecretBox } from "./secrets.ts";
import type { SessionLimits } from "./sessions/core.ts";
import { SessionManager } from "./sessions/manager.ts";
import { createStores } from "./storage/records.ts";
import { createPruner, type RetentionLimits } from "./storage/retention.ts";
import { guardStorage } from "./storage/unavailable.ts";

/**
 * What `createApp` is given: what it runs on, who may reach it, how much it takes on, how it
 * answers a repeated delivery, what it reports, and who hears of a project's change.
 */
export interface AppOptions {
  services: AppServices;
  access?: AppAccess;
  limits?: AppLimits;
  /** Repeated deliveries (default: keys kept 24 h, in the service's storage). */
  dedup?: DedupOptions;
  observe?: ObserveOptions;
  /** Told when a project's configuration changed, here or on another instance (the scheduler). */
  onChanged?: (projectId: string) => void;
}

/** What the app runs on, made by its host (src/platform/, or a test). */
export interface AppServices {
  storage: Storage;
  runtime: Runtime;
  secrets: SecretBox;
  /** The other instances (Redis), if any. */
  cluster?: Cluster;
}

/** Who may call the service, and where it is reached from outside. */
export interface AppAccess {
  /** Required on `/api` (and `/metrics`, `/ui`) unless undefined (dev mode). */
  apiToken?: string;
  /** The service's external base URL, for `get_webhook_url` and published store values. */
  publicUrl?: () => string;
}

/** How much the service takes on, how long it waits, and how much history it keeps. */
export interface AppLimits {
  /** A delivery's body and waits (default: 1 MiB, 30 s for the body, 30 s for an outcome). */
  requests?: RequestLimits;
  /** See SessionLimits (src/sessions/core.ts); default: 10 s a workflow, 10,000 alive, 2 s to evict. */
  sessions?: Partial<SessionLimits>;
  /** How much history storage keeps (default: 10,000 sessions a project, 100,000 events). */
  retention?: RetentionLimits;
}

/** What the service reports through (src/observe/): its log, spans, the runtime's gauges. */
export interface ObserveOptions {
  log?: Logger;
  /** Spans (OpenTelemetry, from `loadTracing`); null or absent: none. See docs/observability.md. */
  tracing?: Tracing | null;
  /** What the Python runtime counts (queue, warm servers), for `/metrics`. */
  runtimeGauges?: MetricSources["runtime"];
}

/**
 * The service as a Hono app: webhooks, the management API, health. The same app runs in the
 * emulator and in the container; `sessions.recover()` resumes work after a restart.
 * @example const { app } = createApp({ services: { storage, runtime, secrets } }); await app.request("/healthz")
 */
export function createApp(opts: AppOptions) {
  const { services, access = {}, limits = {} } = opts;
  const { storage, runtime, secrets } = services;
  const log = opts.observe?.log ?? silentLogger;
  const sources = {
    runtime: opts.observe?.runtimeGauges,
    sessions: () => ({ live: sessions.activeCount, parked: sessions.parkedCount }),
  };
  const observer = createObserver({ tracing: opts.observe?.tracing ?? null, log, sources });
  const stores = createStores(guardStorage(storage, observer.storageCall));
  const cluster = services.cluster ?? localCluster();
  const retention = limits.retention ?? { sessionsPerProject: 10_000, events: 100_000 };
  const pruner = createPruner(stores, retention, log);
  const store = createProjectKv({ storage });
  const sessionParts = { stores, observer, log, cluster, pruner, store };
  const { publicUrl, apiToken } = access;
  const sessionConfig = { runtime, secrets, publicUrl, limits: limits.sessions };
  const sessions = new SessionManager(sessionOptions(sessionConfig, sessionParts));
  sessions.onStarted(observer.sessionStarted);
  // Not ready until the Python environment and the active deployments are prepared (`start()`,
  // called by the platform); a change of a project prepares its deployment on every instance.
  const readiness = createReadiness({ stores, runtime, secrets, log });
  // Shared: invalidations arrive at least once, but a Redis restart loses them: entries also age out.
  const triggers = createTriggerCache(stores, cluster.shared ? 5000 : 0);
  const locks = keyedLock();
  const dedup = appDeduper(storage, opts.dedup);
  const { onChanged } = opts;
  const { changed, unsubscribe } = projectChanges({ cluster, triggers, readiness, onChanged });

  const app = new Hono();
  app.use("*", observer.middleware);
  answerErrors(app, log);
  mountService(app, { observer, readiness, sessions, store, apiToken });
  const deliveryLimits = limits.requests ?? {};
  mountDeliveries(app, { triggers, stores, sessions, secrets, dedup, log, limits: deliveryLimits });
  const api = { stores, sessions, store, runtime, secrets, locks, changed, apiToken };
  app.route("/api/v1", apiRoutes(api));
  // The web UI reads the service through one adapter (src/ui/service-adapter.ts).
  const ui = mountUi(app, { storage, stores, sessions, cluster, log, secrets, apiToken });
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
      if (!services.cluster) await cluster.dispose();
      await observer.dispose();
    },
  };
}

export type HooklineApp = ReturnType<typeof createApp>;
