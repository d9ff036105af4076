import { Hono } from "hono";
import type { Readiness } from "../deploy/readiness.ts";
import type { ProjectKv } from "../kv/project-kv.ts";
import { storePublicRoutes } from "../kv/public-routes.ts";
import type { SessionManager } from "../sessions/manager.ts";
import { metricsRoute } from "./metrics.ts";

/** What the service's own routes report from. */
export interface ServiceRouteDeps {
  metrics: Parameters<typeof metricsRoute>[0];
  readiness: Pick<Readiness, "reason">;
  sessions: Pick<SessionManager, "activeCount">;
  kv: ProjectKv;
  /** Required on `/metrics` unless undefined (dev mode). */
  apiToken?: string;
}

/**
 * The service's own routes: health, readiness, `/metrics` and published store values.
 * @example app.route("/", serviceRoutes({ metrics, readiness, sessions, kv }));
 */
export function serviceRoutes(p: ServiceRouteDeps): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.route("/metrics", metricsRoute(p.metrics, p.apiToken));
  app.get("/readyz", (c) => {
    const reason = p.readiness.reason();
    if (reason) return c.json({ ok: false, reason, sessions: p.sessions.activeCount }, 503);
    return c.json({ ok: true, sessions: p.sessions.activeCount });
  });
  // Published store values: no token (they are what get_store_public_url hands out).
  app.route("/store", storePublicRoutes(p.kv));
  return app;
}
