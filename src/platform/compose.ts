import type { Storage } from "unstorage";
import { createApp, type DeliveryServices, type RequestLimits } from "../app.ts";
import { type Cluster, localCluster } from "../cluster/cluster.ts";
import { saveInstallation } from "../deploy/github-installation.ts";
import { createReadiness } from "../deploy/readiness.ts";
import { createProjectKv } from "../kv/project-kv.ts";
import { keyedLock } from "../locks.ts";
import { type Logger, silentLogger } from "../log.ts";
import { createOAuth, type OAuthDeps, type OAuthEnv, type OAuthService } from "../oauth/index.ts";
import { createObserver } from "../observe/observer.ts";
import type { MetricSources } from "../observe/scraped-metrics.ts";
import type { Tracing } from "../observe/tracing.ts";
import { type AddressCache, createAddressCache } from "../routes/address-cache.ts";
import { createDeduper, redisDedupStore, storageDedupStore } from "../routes/dedup.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { FrontCounters } from "../sessions/context.ts";
import type { SessionLimits } from "../sessions/core.ts";
import { type Delivery, SessionManager } from "../sessions/manager.ts";
import { instanceCounters } from "../stats/counters.ts";
import { createStores } from "../storage/records.ts";
import { createPruner, type RetentionLimits } from "../storage/retention.ts";
import { guardStorage } from "../storage/unavailable.ts";
import type { HostFacts } from "../ui/about.ts";
import { createUiData } from "../ui/service-adapter.ts";
import {
  type ConnectionKeepers,
  connectionKeepers,
  pubsubRouteParts,
} from "./connection-keepers.ts";
import { projectChanges } from "./project-changes.ts";
import { sessionOptions } from "./session-options.ts";

/**
 * What a host gives to compose the service: what it runs on, who may reach it, how much it
 * takes on, how it answers a repeated delivery, what it reports, and who hears of a project's
 * change.
 */
export interface ComposeOptions {
  services: BaseServices;
  access?: {
    /** Required on `/api` (and `/metrics`, `/ui`) unless undefined (dev mode). */
    apiToken?: string;
    /**
     * The service's external base URL as configured (`SVC_PUBLIC_URL`): every URL it prints
     * names it. Unset: a request's URLs (the UI's, OAuth callbacks) take the origin the router
     * forwarded, and sessions' (`get_webhook_url`, store values) take `listeningUrl`.
     */
    publicUrl?: () => string;
    /** Where the service listens: sessions' base URL when `publicUrl` is unset. */
    listeningUrl?: () => string;
  };
  limits?: ServiceLimits;
  /** Repeated deliveries (default: keys kept 24 h, in the service's storage). */
  dedup?: DedupOptions;
  observe?: ObserveOptions;
  /** Told when a project's configuration changed, here or on another instance (the scheduler). */
  onChanged?: (projectId: string) => void;
  /** OAuth clients (`GOOGLE_CLIENT_ID`, …) and `SVC_OAUTH_…` settings (default: process.env). */
  oauthSettings?: OAuthEnv;
  /** What the host knows of itself (mode, storage, data home, Python), for the settings page. */
  host?: HostFacts;
}

/** What the service runs on, made by its host (src/platform/node.ts, or a test). */
export interface BaseServices {
  storage: Storage;
  runtime: Runtime;
  secrets: SecretBox;
  /** The other instances (Redis), if any. */
  cluster?: Cluster;
  /** The front door's counters, when a thread of its own takes webhooks (src/front/). */
  front?: FrontCounters;
}

/** How much the service takes on, how long it waits, and how much history it keeps. */
export interface ServiceLimits {
  /** A delivery's body and waits (default: 1 MiB, 30 s for the body, 30 s for an outcome). */
  requests?: Partial<RequestLimits>;
  /** See SessionLimits (src/sessions/core.ts); default: 10 s a workflow, 10,000 alive, 2 s to evict. */
  sessions?: Partial<SessionLimits>;
  /** How much history storage keeps (default: 10,000 sessions a project, 100,000 events). */
  retention?: RetentionLimits;
}

/** Repeated deliveries: how long their keys are kept, and the Redis that shares them, if any. */
export interface DedupOptions {
  windowMs: number;
  redis?: { url: string; base: string } | null;
}

/** What the service reports through (src/observe/): its log, spans, the runtime's gauges. */
export interface ObserveOptions {
  log?: Logger;
  /** Spans (OpenTelemetry, from `loadTracing`); null or absent: none. See docs/observability.md. */
  tracing?: Tracing | null;
  /** What the Python runtime counts (queue, warm servers), for `/metrics`. */
  runtimeGauges?: MetricSources["runtime"];
  /** What the front door's thread counts, summed into `/metrics`. */
  elsewhere?: MetricSources["elsewhere"];
}

/** What `/metrics` reads at scrape time: the runtime's gauges and the sessions alive here. */
function metricSources(opts: ComposeOptions, sessions: () => SessionManager) {
  return {
    runtime: opts.observe?.runtimeGauges,
    elsewhere: opts.observe?.elsewhere,
    sessions: () => ({ live: sessions().activeCount, parked: sessions().parkedCount }),
  };
}

/**
 * The service composed over what its host made: the observer around the runtime and storage,
 * the stores, retention, the project kv, the session core, readiness, where addresses lead,
 * repeated deliveries, the UI's reader, and the Hono app (`createApp`) over them. The Node host
 * (node.ts: `cli up` and the container) and the tests call it; `sessions.recover()` resumes
 * work after a restart, and `dispose()` undoes it all in order.
 * @example const service = composeApp({ services: { storage, runtime, secrets } }); await service.app.request("/healthz");
 */
export function composeApp(opts: ComposeOptions) {
  const { services, access = {}, limits = {} } = opts;
  const { storage, runtime, secrets } = services;
  const log = opts.observe?.log ?? silentLogger;
  const sources = metricSources(opts, () => sessions);
  const observer = createObserver({ tracing: opts.observe?.tracing ?? null, log, sources });
  const stores = createStores(guardStorage(storage, observer.storageCall));
  const cluster = services.cluster ?? localCluster();
  const retention = limits.retention ?? { sessionsPerProject: 10_000, events: 100_000 };
  const pruner = createPruner(stores, retention, log);
  const kv = createProjectKv({ storage });
  const { publicUrl, apiToken, listeningUrl } = access;
  const sessionUrl = publicUrl ?? listeningUrl;
  // Not ready until the Python environment and the active deployments are prepared (`start()`,
  // called by the platform); a change of a project prepares its deployment on every instance.
  const readiness = createReadiness({ stores, runtime, secrets, log });
  // Shared: invalidations arrive at least once, but a Redis restart loses them: entries also age out.
  const addresses = createAddressCache(stores, cluster.shared ? 5000 : 0);
  const dedup = deduper(storage, opts.dedup);
  // The keepers renew webhooks and channels with tokens the OAuth refresher keeps fresh, and vice versa.
  const parts = { cluster, addresses: dropping(addresses, () => sessions), readiness, stores, log };
  const { projects, unsubscribe, keepers } = projectWork(opts, parts, () => ({ oauth, sessions }));
  const oauthDeps = { projects: { stores, ...projects }, storage, cluster, log };
  const oauth = oauthService(opts, oauthDeps, keepers);
  const sessionConfig = {
    ...{ runtime, secrets, publicUrl: sessionUrl, limits: limits.sessions, front: services.front },
  };
  const { stats, backfill } = instanceCounters(stores, () => sessions, log);
  const sessionParts = { stores, observer, log, cluster, pruner, kv, oauth: oauth.tokens, stats };
  const sessions = new SessionManager(sessionOptions(sessionConfig, sessionParts));
  // Counted as they start here (the counters' ends: the core's `onEnded`, as `/metrics`).
  for (const l of [observer.sessionStarted, stats.started]) sessions.onStarted(l);
  const deliveries = deliveryServices({ addresses, dedup, secrets }, keepers, limits.requests);
  const ui = uiData({ stores, sessions, stats, log, secrets }, opts, () => app);
  const base = { log, observer, stores, sessions, kv, readiness };
  const app = createApp({ ...base, deliveries, projects, ui, oauth }, { apiToken, publicUrl });
  return {
    app,
    /** Connections authorized with OAuth; `oauth.onAuthorized(listener)` is the seam after it. */
    oauth,
    stores,
    sessions,
    pruner,
    readiness,
    kv,
    metrics: observer.metrics, // `/metrics`'s counters: `metrics.connectionRefused(…)` and the rest
    observer,
    stats, // the overview's session counters (src/stats/)
    backfill, // counts sessions stored before the counters existed, once: `start()` by the host
    /** Jira, Confluence and Telegram webhooks', Calendar and Drive channels' keepers: `start()` once recovered. */
    keepers,
    async dispose() {
      unsubscribe();
      await keepers.dispose();
      await ui.dispose?.();
      await sessions.dispose();
      await stats.dispose();
      await kv.dispose();
      await pruner.idle();
      await dedup.dispose();
      if (!services.cluster) await cluster.dispose();
      await observer.dispose();
    },
  };
}

export type ComposedService = ReturnType<typeof composeApp>;

/** The UI's reader; its test requests go through the app itself (its webhook route). */
function uiData(
  d: Omit<Parameters<typeof createUiData>[0], "fetch" | "openSecret"> & { secrets: SecretBox },
  opts: Pick<ComposeOptions, "host" | "oauthSettings">,
  app: () => { fetch: (req: Request) => Response | Promise<Response> },
) {
  const { secrets, ...rest } = d;
  return createUiData({
    ...rest,
    facts: { host: opts.host, oauthSettings: opts.oauthSettings ?? process.env },
    fetch: async (req) => app().fetch(req),
    openSecret: (sealed) => secrets.open(sealed),
  });
}

/** Connections authorized with OAuth: the clients and URLs from the environment unless given. */
function oauthService(
  opts: ComposeOptions,
  d: Omit<OAuthDeps, "settings">,
  keepers: Pick<ConnectionKeepers, "authorized">,
) {
  const settings = opts.oauthSettings ?? process.env;
  const oauth = createOAuth({
    ...d,
    settings,
    // A github connection's App installation, confirmed with GitHub before it is saved.
    installation: (projectId, connection, id) =>
      saveInstallation({ ...d.projects, env: settings }, projectId, connection, id),
  });
  // An authorized jira or confluence connection gets its webhooks at once, a Calendar or Drive one its channel.
  oauth.onAuthorized((a) => keepers.authorized(a));
  return oauth;
}

/**
 * What a project's change does: caches dropped and the deployment prepared (projectChanges),
 * the host's `onChanged` told (the scheduler), and the connections' keepers (their webhooks,
 * Google's watches, Discord's gateways: connection-keepers.ts); the API changes projects with
 * `projects`.
 */
function projectWork(
  opts: ComposeOptions,
  parts: Omit<Parameters<typeof projectChanges>[0], "onChanged"> & {
    stores: ReturnType<typeof createStores>;
    log: Logger;
  },
  /** What is made after the keepers: the OAuth service, and the sessions (Discord's events). */
  later: () => { oauth: OAuthService; sessions: SessionManager },
) {
  const { cluster, stores, log } = parts;
  const { runtime, secrets } = opts.services;
  const locks = keyedLock();
  const onChanged = (projectId: string) => {
    opts.onChanged?.(projectId);
    keepers.changed(projectId);
  };
  const { changed, unsubscribe } = projectChanges({ ...parts, onChanged });
  const publicUrl = opts.access?.publicUrl ?? opts.access?.listeningUrl;
  const projects = { stores, secrets, locks, changed };
  const oauth = () => later().oauth;
  const discord = { ingest: (d: Delivery) => later().sessions.prepare(d).run(), stores };
  const keepers = connectionKeepers({ projects, cluster, publicUrl, log, oauth, discord });
  return { projects: { runtime, secrets, locks, changed }, unsubscribe, keepers };
}

/** What a project's change drops: where its addresses lead, and the project sessions start with. */
function dropping(addresses: AddressCache, sessions: () => SessionManager | undefined) {
  return {
    invalidate(projectId: string) {
      addresses.invalidate(projectId);
      sessions()?.projectChanged(projectId);
    },
  };
}

/**
 * What the delivery routes are given: where addresses lead, repeats, the secrets, the limits,
 * and what reads Google's changes (a watch channel's notification, a Pub/Sub push).
 */
function deliveryServices(
  parts: Pick<DeliveryServices, "addresses" | "dedup" | "secrets">,
  keepers: ConnectionKeepers,
  requests?: Partial<RequestLimits>,
): DeliveryServices {
  const pubsub = pubsubRouteParts(keepers);
  return { ...parts, pull: keepers.googleWatches.pull, pubsub, limits: requestLimits(requests) };
}

/** A delivery's limits with their defaults: 1 MiB a body, 30 s for an outcome. */
function requestLimits(given: Partial<RequestLimits> = {}): RequestLimits {
  return {
    maxBody: given.maxBody ?? 1024 * 1024,
    syncTimeoutMs: given.syncTimeoutMs ?? 30_000,
    bodyTimeoutMs: given.bodyTimeoutMs,
  };
}

/**
 * Repeated deliveries: keys kept `windowMs` (default 24 h), in Redis when instances share them,
 * else in the service's storage.
 */
function deduper(storage: Storage, dedup?: DedupOptions) {
  const redis = dedup?.redis;
  return createDeduper(
    redis ? redisDedupStore(redis.url, redis.base) : storageDedupStore(storage),
    dedup?.windowMs ?? 24 * 3600_000,
  );
}
