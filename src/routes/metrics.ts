import { Hono } from "hono";
import { HooklineError } from "../errors.ts";

/**
 * `GET /metrics`: the registry in Prometheus's text format. Outside dev mode it needs the API
 * token, as `/api` does: label values name projects and triggers.
 * @example app.route("/metrics", metricsRoute(observer.metrics, token, tokenMatches));
 */
export function metricsRoute(
  metrics: { text(): Promise<string>; contentType: string },
  apiToken: string | undefined,
  tokenMatches: (header: string | undefined, token: string) => boolean,
) {
  const app = new Hono();
  app.get("/", async (c) => {
    if (apiToken && !tokenMatches(c.req.header("authorization"), apiToken)) {
      c.header("WWW-Authenticate", 'Bearer realm="hookline"');
      throw new HooklineError("unauthorized", "a valid bearer token is required");
    }
    return c.body(await metrics.text(), 200, { "content-type": metrics.contentType });
  });
  return app;
}
