import { Hono } from "hono";
import type { Readiness } from "./deploy/readiness.ts";
import type { ProjectKv } from "./kv/project-kv.ts";
import type { Logger } from "./log.ts";
import type { OAuthService } from "./oauth/index.ts";
import type { ObservedEnv, Observer } from "./observe/observer.ts";
import type { AddressCache } from "./routes/address-cache.ts";
import { apiRoutes, type ProjectChanges } from "./routes/api/routes.ts";
import type { Deduper } from "./routes/dedup.ts";
import type { DeliveryLimits } from "./routes/delivery.ts";
import { type PubsubRouteDeps, pubsubRoutes } from "./routes/google-pubsub.ts";
import { type InboundDeps, inboundRoutes } from "./routes/inbound.ts";
import { oauthRoutes } from "./routes/oauth.ts";
import { answerErrors } from "./routes/problem.ts";
import { serviceRoutes } from "./routes/service.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import type { SecretBox } from "./secrets.ts";
import type { SessionManager } from "./sessions/manager.ts";
import type { Stores } from "./storage/records.ts";
import type { UiData } from "./ui/data.ts";
import { uiRoutes } from "./ui/routes.tsx";

/**
 * What the app's routes serve from, made by the platform that hosts it (src/platform/compose.ts
 * for the Node host and the container, or a test): the app makes none of it.
 */
export interface AppServices {
  log: Logger;
  /** Metrics, spans and the facts log lines carry: its middleware sees every request. */
  observer: Observer;
  stores: Stores;
  sessions: SessionManager;
  kv: ProjectKv;
  /** Whether the service may take work (`/readyz`). */
  readiness: Pick<Readiness, "reason">;
  /** What deliveries (`/webhooks`, `/inbound`) are taken with. */
  deliveries: DeliveryServices;
  /** What the API changes projects with (deploys, vars). */
  projects: ProjectChanges;
  /** What the web UI reads (src/ui/service-adapter.ts). */
  ui: UiData;
  /** Connections authorized with OAuth (`/oauth/…`); absent: those routes are not served. */
  oauth?: OAuthService;
}

/** What the two delivery routes are given beside the sessions. */
export interface DeliveryServices {
  /** Webhook and inbound ids → what they reach, cached. */
  addresses: AddressCache;
  /** Answers repeated deliveries once; none: off. */
  dedup?: Deduper;
  /** Opens a connection's secrets, to verify what its provider sends. */
  secrets: SecretBox;
  limits: RequestLimits;
  /** Reads what changed at Google when a watch channel's notification comes (inbound.ts). */
  pull?: InboundDeps["pull"];
  /** Gmail's and Forms' Pub/Sub pushes (google-pubsub.ts); absent: not served. */
  pubsub?: Pick<PubsubRouteDeps, "verify" | "read">;
}

/** What a delivery may carry and how long it is waited on. */
export interface RequestLimits extends DeliveryLimits {
  /** How long a synchronous webhook waits for its session's outcome, ms. */
  syncTimeoutMs: number;
}

/** Who may call the service. */
export interface AppAccess {
  /** Required on `/api` (and `/metrics`, `/ui`) unless undefined (dev mode). */
  apiToken?: string;
  /** The service's external URL (SVC_PUBLIC_URL), which OAuth callbacks name. */
  publicUrl?: () => string;
}

/**
 * The service as a Hono app: its routes, over the services it is given. Webhooks and
 * connections' deliveries, the management API, health and metrics, the web UI; errors as
 * problem+json. The same app runs in the emulator and in the container.
 * @example const app = createApp(services, { apiToken }); await app.request("/healthz");
 */
export function createApp(services: AppServices, access: AppAccess = {}): Hono<ObservedEnv> {
  const { log, observer, stores, sessions, kv, deliveries } = services;
  const { apiToken } = access;
  const app = new Hono<ObservedEnv>();
  app.use("*", observer.middleware);
  answerErrors(app, log);
  const { metrics } = observer;
  app.route("/", serviceRoutes({ metrics, readiness: services.readiness, sessions, kv, apiToken }));
  const { addresses, dedup, secrets, limits, pull } = deliveries;
  const taking = { addresses, sessions, dedup, limits };
  // Both take deliveries the one way (src/routes/delivery.ts); connections' providers (GitHub,
  // Slack, HTTP senders) post to /inbound, verified before anything is stored.
  app.route("/webhooks", webhookRoutes(taking, limits.syncTimeoutMs));
  app.route("/inbound", inboundRoutes(taking, { secrets, log, pull }));
  const { pubsub } = deliveries;
  const publicUrl = access.publicUrl;
  if (pubsub) app.route("/google/pubsub", pubsubRoutes({ ...taking, ...pubsub, log, publicUrl }));
  const projects = services.projects;
  app.route("/api/v1", apiRoutes({ stores, sessions, kv, projects, apiToken }));
  app.route("/ui", uiRoutes({ data: services.ui, apiToken, log }));
  const { oauth } = services;
  if (oauth)
    app.route("/oauth", oauthRoutes({ oauth, log, apiToken, publicUrl: access.publicUrl }));
  return app;
}
