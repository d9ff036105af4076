import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import type { Storage } from "unstorage";
import { type Cluster, localCluster } from "./cluster/cluster.ts";
import { createReadiness } from "./deploy/readiness.ts";
import { HooklineError } from "./errors.ts";
import { createProjectStore } from "./kv/project-kv.ts";
import { storePublicRoutes } from "./kv/public-routes.ts";
import { keyedLock } from "./locks.ts";
import { type Logger, silentLogger } from "./log.ts";
import { createObserver } from "./observe/observer.ts";
import type { Tracing } from "./observe/tracing.ts";
import { api as routes } from "./routes/api/contract.ts";
import { envRoutes } from "./routes/api/envs.ts";
import { eventRoutes } from "./routes/api/events.ts";
import { storeRoutes } from "./routes/api/kv.ts";
import { openapi } from "./routes/api/openapi.ts";
import { projectRoutes } from "./routes/api/projects.ts";
import { sessionRoutes } from "./routes/api/sessions.ts";
import { createDeduper, redisDedupStore, storageDedupStore } from "./routes/dedup.ts";
import { inboundRoutes } from "./routes/inbound.ts";
import { metricsRoute } from "./routes/metrics.ts";
import { createTriggerCache } from "./routes/trigger-cache.ts";
import { serve } from "./routes/validate.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import type { Runtime } from "./runtime/runtime.ts";
import type { SecretBox } from "./secrets.ts";
import { SessionManager } from "./sessions/manager.ts";
import { createStores } from "./storage/records.ts";
import { createPruner, type RetentionLimits } from "./storage/retention.ts";
import { guardStorage, StorageUnavailable } from "./storage/unavailable.ts";
import { uiRoutes } from "./ui/routes.tsx";
import { createUiData } from "./ui/service-adapter.ts";

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
  /** See SessionManagerOptions.evictAfterMs. */
  evictAfterMs?: number;
  /** The other instances (Redis), if any. */
  cluster?: Cluster;
  /** See SessionManagerOptions.sweepMs. */
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

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  if (!m) return false;
  // Equal-length digests: the comparison takes the same time whatever the length or the prefix.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(m[1]!), digest(token));
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
  const stores = createStores(guardStorage(observer.storage(opts.storage)));
  const cluster = opts.cluster ?? localCluster();
  const pruner = createPruner(
    stores,
    opts.retention ?? { sessionsPerProject: 10_000, events: 100_000 },
    log,
  );
  const store = createProjectStore({
    storage: opts.storage,
    storageUrl: opts.storageUrl ?? "memory:",
  });
  const sessions = new SessionManager({
    stores,
    runtime: observer.runtime(opts.runtime),
    secrets: opts.secrets,
    log,
    workflowTimeoutMs: opts.workflowTimeoutMs ?? 10_000,
    maxActive: opts.maxActiveSessions ?? 10_000,
    slots: opts.sessionSlots,
    evictAfterMs: opts.evictAfterMs ?? 2000,
    cluster,
    sweepMs: opts.sweepMs,
    onEnded: (record) => {
      pruner.sessionEnded(record.project_id);
      observer.sessionEnded(record);
    },
    onEvent: () => pruner.eventStored(),
    sdk: { store, publicUrl: opts.publicUrl ?? (() => "http://127.0.0.1:9980") },
  });
  sessions.onStarted(observer.sessionStarted);
  // Not ready until the Python environment and the active deployments are prepared (`start()`,
  // called by the platform); a change of a project prepares its deployment on every instance.
  const readiness = createReadiness({ stores, runtime: opts.runtime, secrets: opts.secrets, log });
  // Shared: invalidations arrive at least once, but a Redis restart loses them: entries also age out.
  const triggers = createTriggerCache(stores, cluster.shared ? 5000 : 0);
  const locks = keyedLock();
  const redis = opts.dedup?.redis;
  const dedup = createDeduper(
    redis ? redisDedupStore(redis.url, redis.base) : storageDedupStore(opts.storage),
    opts.dedup?.windowMs ?? 24 * 3600_000,
  );
  // A deploy or a var change on any instance drops what every instance cached of the project.
  const unsubscribe = cluster.bus.receive("invalidate", (m) => {
    const projectId = (m as { project_id: string }).project_id;
    triggers.invalidate(projectId);
    readiness.project(projectId);
    if (cluster.shared) opts.onChanged?.(projectId);
  });
  const changed = (projectId: string) => {
    triggers.invalidate(projectId);
    readiness.project(projectId);
    opts.onChanged?.(projectId);
    if (cluster.shared) {
      const id = `${projectId}:${randomUUID()}`;
      void cluster.bus.send("invalidate", { id, project_id: projectId }).catch(() => {});
    }
  };

  const app = new Hono();
  app.use("*", observer.middleware);
  app.onError((err, c) => {
    const known =
      err instanceof HooklineError ? err : new HooklineError("internal", "internal server error");
    if (!(err instanceof HooklineError)) log.error(`${c.req.method} ${c.req.path}`, err);
    if (err instanceof StorageUnavailable) {
      log.error(`${c.req.method} ${c.req.path}: storage failed`, err.cause);
      c.header("Retry-After", "5");
    }
    return c.json(known.toProblem(), known.status as 500, {
      "content-type": "application/problem+json",
    });
  });
  app.notFound(() => {
    throw new HooklineError("not_found", "no such route");
  });
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.route("/metrics", metricsRoute(observer.metrics, opts.apiToken, tokenMatches));
  app.get("/readyz", (c) => {
    const reason = readiness.reason();
    if (reason) return c.json({ ok: false, reason, sessions: sessions.activeCount }, 503);
    return c.json({ ok: true, sessions: sessions.activeCount });
  });
  // Published store values: no token (they are what get_store_public_url hands out).
  app.route("/store", storePublicRoutes(store));
  app.route(
    "/webhooks",
    webhookRoutes({
      triggers,
      sessions,
      maxBody: opts.maxBody ?? 1024 * 1024,
      syncTimeoutMs: opts.syncTimeoutMs ?? 30_000,
      bodyTimeoutMs: opts.bodyTimeoutMs,
      dedup,
    }),
  );
  // Connections' providers (GitHub, Slack, HTTP senders) post here; verified before anything is stored.
  app.route(
    "/inbound",
    inboundRoutes({
      stores,
      sessions,
      secrets: opts.secrets,
      maxBody: opts.maxBody ?? 1024 * 1024,
      bodyTimeoutMs: opts.bodyTimeoutMs,
      dedup,
      log,
    }),
  );

  const api = new Hono();
  if (opts.apiToken) {
    const token = opts.apiToken;
    api.use("*", async (c, next) => {
      if (c.req.path.endsWith("/openapi.json")) return next();
      if (!tokenMatches(c.req.header("authorization"), token)) {
        c.header("WWW-Authenticate", 'Bearer realm="hookline"');
        throw new HooklineError("unauthorized", "a valid bearer token is required");
      }
      return next();
    });
  }
  serve(api, routes.openapi, (c) => c.json(openapi));
  api.route(
    "/",
    projectRoutes(stores, { stores, runtime: opts.runtime, secrets: opts.secrets, locks, changed }),
  );
  api.route("/", envRoutes(stores, opts.secrets, locks, changed));
  api.route("/", sessionRoutes(stores, sessions));
  api.route("/", eventRoutes(stores));
  api.route("/", storeRoutes(stores, store));
  app.route("/api/v1", api);
  // The web UI reads the service through one adapter (src/ui/service-adapter.ts).
  const ui = createUiData({
    storage: opts.storage,
    stores,
    sessions,
    fetch: async (req) => app.fetch(req),
    shared: cluster.shared,
    log,
    openSecret: (sealed) => opts.secrets.open(sealed),
  });
  app.route("/ui", uiRoutes({ data: ui, apiToken: opts.apiToken, log }));

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
