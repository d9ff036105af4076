import { Hono } from "hono";
import { checkBearer } from "./auth.ts";

/**
 * `GET /metrics`: the registry in Prometheus's text format. Outside dev mode it needs the API
 * token, as `/api` does: label values name projects and triggers.
 * @example app.route("/metrics", metricsRoute(observer.metrics, token));
 */
export function metricsRoute(
  metrics: { text(): Promise<string>; contentType: string },
  apiToken: string | undefined,
) {
  const app = new Hono();
  app.get("/", async (c) => {
    if (apiToken) checkBearer(c, apiToken);
    return c.body(await metrics.text(), 200, { "content-type": metrics.contentType });
  });
  return app;
}
