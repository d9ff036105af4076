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

/** The favicon: a hook on a line, in the UI's accent blue (SVG, a few hundred bytes). */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#2457c5"/><path d="M16 4v14a6 6 0 1 1-6-6" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>`;

/**
 * The service's own routes: `/` (to the web UI), the favicon, health, readiness, `/metrics`
 * and published store values.
 * @example app.route("/", serviceRoutes({ metrics, readiness, sessions, kv }));
 */
export function serviceRoutes(p: ServiceRouteDeps): Hono {
  const app = new Hono();
  // A browser opened on the service's address lands on the web UI, not on a 404.
  app.get("/", (c) => c.redirect("/ui", 302));
  // Browsers ask every page's host for /favicon.ico; an SVG answers it in each of them.
  app.get("/favicon.ico", (c) =>
    c.body(FAVICON, 200, {
      "content-type": "image/svg+xml",
      "cache-control": "public, max-age=86400",
    }),
  );
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
