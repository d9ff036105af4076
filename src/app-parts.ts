/**
 * The parts `createApp` (src/app.ts) composes, each named: the session core's options, the
 * deduper, how a project's change travels, the error answer, and the routes mounted (the
 * service's own, the deliveries, the API, the UI). `createApp` keeps the order they are made in
 * and what `dispose` undoes.
 */
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { Storage } from "unstorage";
import type { Cluster } from "./cluster/cluster.ts";
import type { Readiness } from "./deploy/readiness.ts";
import { HooklineError } from "./errors.ts";
import type { ProjectKv } from "./kv/project-kv.ts";
import { storePublicRoutes } from "./kv/public-routes.ts";
import type { keyedLock } from "./locks.ts";
import type { Logger } from "./log.ts";
import type { Observer } from "./observe/observer.ts";
import { api as routes } from "./routes/api/contract.ts";
import { envRoutes } from "./routes/api/envs.ts";
import { eventRoutes } from "./routes/api/events.ts";
import { storeRoutes } from "./routes/api/kv.ts";
import { openapi } from "./routes/api/openapi.ts";
import { projectRoutes } from "./routes/api/projects.ts";
import { sessionRoutes } from "./routes/api/sessions.ts";
import { createDeduper, type Deduper, redisDedupStore, storageDedupStore } from "./routes/dedup.ts";
import type { DeliveryLimits } from "./routes/delivery.ts";
import { inboundRoutes } from "./routes/inbound.ts";
import { metricsRoute } from "./routes/metrics.ts";
import { httpStatus, toProblem } from "./routes/problem.ts";
import type { TriggerCache } from "./routes/trigger-cache.ts";
import { serve } from "./routes/validate.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import type { Runtime } from "./runtime/runtime.ts";
import { type SecretBox, sameSecret } from "./secrets.ts";
import type { SessionLimits } from "./sessions/core.ts";
import type { SessionManager, SessionManagerOptions } from "./sessions/manager.ts";
import type { Stores } from "./storage/records.ts";
import type { Pruner } from "./storage/retention.ts";
import { StorageUnavailable } from "./storage/unavailable.ts";
import { uiRoutes } from "./ui/routes.tsx";
import { createUiData } from "./ui/service-adapter.ts";

/** Whether an `Authorization: Bearer …` header carries `token` (compared in constant time). */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return m ? sameSecret(m[1]!, token) : false;
}

/** What the session core is given beside the app's options: the parts made before it. */
export interface SessionCoreParts {
  stores: Stores;
  observer: Observer;
  log: Logger;
  cluster: Cluster;
  pruner: Pruner;
  store: ProjectKv;
}

/**
 * The session core's options: the app's limits with their defaults, the runtime seen by the
 * observer, and every ended session and stored event told to the pruner (history stays bounded).
 */
export function sessionOptions(
  opts: {
    runtime: Runtime;
    secrets: SecretBox;
    limits?: Partial<SessionLimits>;
    publicUrl?: () => string;
  },
  parts: SessionCoreParts,
): SessionManagerOptions {
  const { stores, observer, log, cluster, pruner, store } = parts;
  const limits = opts.limits ?? {};
  return {
    deps: {
      stores,
      runtime: observer.runtime(opts.runtime),
      secrets: opts.secrets,
      log,
      cluster,
      sdk: { kv: store, publicUrl: opts.publicUrl ?? (() => "http://127.0.0.1:9980") },
    },
    limits: {
      workflowTimeoutMs: limits.workflowTimeoutMs ?? 10_000,
      maxActive: limits.maxActive ?? 10_000,
      slots: limits.slots,
      evictAfterMs: limits.evictAfterMs ?? 2000,
      sweepMs: limits.sweepMs,
    },
    listeners: {
      onEnded: (record) => {
        pruner.sessionEnded(record.project_id);
        observer.sessionEnded(record);
      },
      onEvent: () => pruner.eventStored(),
    },
  };
}

/** Repeated deliveries: how long their keys are kept, and the Redis that shares them, if any. */
export interface DedupOptions {
  windowMs: number;
  redis?: { url: string; base: string } | null;
}

/**
 * Repeated deliveries: keys kept `windowMs` (default 24 h), in Redis when instances share them,
 * else in the service's storage.
 */
export function appDeduper(storage: Storage, dedup?: DedupOptions): Deduper {
  const redis = dedup?.redis;
  return createDeduper(
    redis ? redisDedupStore(redis.url, redis.base) : storageDedupStore(storage),
    dedup?.windowMs ?? 24 * 3600_000,
  );
}

/**
 * A project's change (a deploy, a var): `changed` drops what this instance cached of it, tells
 * `onChanged` (the scheduler) and, when instances share work, every other instance, whose
 * receiver does the same. `unsubscribe` stops the receiving.
 */
export function projectChanges(parts: {
  cluster: Cluster;
  triggers: TriggerCache;
  readiness: Readiness;
  onChanged?: (projectId: string) => void;
}) {
  const { cluster, triggers, readiness, onChanged } = parts;
  const unsubscribe = cluster.bus.receive("invalidate", (m) => {
    const projectId = (m as { project_id: string }).project_id;
    triggers.invalidate(projectId);
    readiness.project(projectId);
    if (cluster.shared) onChanged?.(projectId);
  });
  const changed = (projectId: string) => {
    triggers.invalidate(projectId);
    readiness.project(projectId);
    onChanged?.(projectId);
    if (cluster.shared) {
      const id = `${projectId}:${randomUUID()}`;
      void cluster.bus.send("invalidate", { id, project_id: projectId }).catch(() => {});
    }
  };
  return { changed, unsubscribe };
}

/**
 * Errors as problem+json: a `HooklineError` as it is, anything else logged and answered with a
 * generic 500 (no internals in a response); storage down also says when to retry.
 */
export function answerErrors(app: Hono, log: Logger): void {
  app.onError((err, c) => {
    const known =
      err instanceof HooklineError ? err : new HooklineError("internal", "internal server error");
    if (!(err instanceof HooklineError)) log.error(`${c.req.method} ${c.req.path}`, err);
    if (err instanceof StorageUnavailable) {
      log.error(`${c.req.method} ${c.req.path}: storage failed`, err.cause);
      c.header("Retry-After", "5");
    }
    return c.json(toProblem(known), httpStatus(known.code) as 500, {
      "content-type": "application/problem+json",
    });
  });
  app.notFound(() => {
    throw new HooklineError("not_found", "no such route");
  });
}

/** What the service's own routes (health, readiness, `/metrics`, published values) are given. */
export interface ServiceParts {
  observer: Observer;
  readiness: Readiness;
  sessions: SessionManager;
  store: ProjectKv;
  /** Required on `/metrics` unless undefined (dev mode). */
  apiToken?: string;
}

/** Health, readiness, `/metrics` and published store values. */
export function mountService(app: Hono, p: ServiceParts): void {
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.route("/metrics", metricsRoute(p.observer.metrics, p.apiToken, tokenMatches));
  app.get("/readyz", (c) => {
    const reason = p.readiness.reason();
    if (reason) return c.json({ ok: false, reason, sessions: p.sessions.activeCount }, 503);
    return c.json({ ok: true, sessions: p.sessions.activeCount });
  });
  // Published store values: no token (they are what get_store_public_url hands out).
  app.route("/store", storePublicRoutes(p.store));
}

/** What a delivery may carry and how long it is waited on (src/routes/delivery.ts). */
export interface RequestLimits extends Partial<DeliveryLimits> {
  /** How long a synchronous webhook waits for its session's outcome, ms (default 30 s). */
  syncTimeoutMs?: number;
}

/** What the two routes that take deliveries are given: webhooks and providers' posts. */
export interface DeliveryParts {
  triggers: TriggerCache;
  stores: Stores;
  sessions: SessionManager;
  secrets: SecretBox;
  dedup: Deduper;
  log: Logger;
  limits: RequestLimits;
}

/** Webhooks (`/webhooks`) and connections' providers' posts (`/inbound`), within their limits. */
export function mountDeliveries(app: Hono, p: DeliveryParts): void {
  const { triggers, stores, sessions, secrets, dedup, log } = p;
  const maxBody = p.limits.maxBody ?? 1024 * 1024;
  const syncTimeoutMs = p.limits.syncTimeoutMs ?? 30_000;
  const { bodyTimeoutMs } = p.limits;
  app.route(
    "/webhooks",
    webhookRoutes({ triggers, sessions, maxBody, syncTimeoutMs, bodyTimeoutMs, dedup }),
  );
  // Connections' providers (GitHub, Slack, HTTP senders) post here; verified before anything is stored.
  app.route(
    "/inbound",
    inboundRoutes({ stores, sessions, secrets, maxBody, bodyTimeoutMs, dedup, log }),
  );
}

/**
 * The management API (mounted at `/api/v1`): the bearer token on every route but the OpenAPI
 * document, when a token is set (none: dev mode).
 */
export function apiRoutes(p: {
  stores: Stores;
  sessions: SessionManager;
  store: ProjectKv;
  runtime: Runtime;
  secrets: SecretBox;
  locks: ReturnType<typeof keyedLock>;
  changed: (projectId: string) => void;
  apiToken?: string;
}): Hono {
  const api = new Hono();
  const token = p.apiToken;
  if (token) {
    api.use("*", async (c, next) => {
      if (c.req.path.endsWith("/openapi.json")) return next();
      if (!tokenMatches(c.req.header("authorization"), token)) {
        c.header("WWW-Authenticate", 'Bearer realm="hookline"');
        throw new HooklineError("unauthorized", "a valid bearer token is required");
      }
      return next();
    });
  }
  const { stores, runtime, secrets, locks, changed } = p;
  serve(api, routes.openapi, (c) => c.json(openapi));
  api.route("/", projectRoutes(stores, { stores, runtime, secrets, locks, changed }));
  api.route("/", envRoutes(stores, secrets, locks, changed));
  api.route("/", sessionRoutes(stores, p.sessions));
  api.route("/", eventRoutes(stores));
  api.route("/", storeRoutes(stores, p.store));
  return api;
}

/**
 * The web UI at `/ui`, reading the service through one adapter (src/ui/service-adapter.ts):
 * its API calls go through `app` itself. The adapter is returned for `dispose`.
 */
export function mountUi(
  app: Hono,
  p: {
    storage: Storage;
    stores: Stores;
    sessions: SessionManager;
    cluster: Cluster;
    log: Logger;
    secrets: SecretBox;
    apiToken?: string;
  },
) {
  const ui = createUiData({
    storage: p.storage,
    stores: p.stores,
    sessions: p.sessions,
    fetch: async (req) => app.fetch(req),
    shared: p.cluster.shared,
    log: p.log,
    openSecret: (sealed) => p.secrets.open(sealed),
  });
  app.route("/ui", uiRoutes({ data: ui, apiToken: p.apiToken, log: p.log }));
  return ui;
}
