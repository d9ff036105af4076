import { Hono } from "hono";
import type { Registry } from "prom-client";
import { HooklineError } from "../errors.ts";

/**
 * `GET /metrics`: the registry in Prometheus's text format. Outside dev mode it needs the API
 * token, as `/api` does: label values name projects and triggers.
 * @example app.route("/metrics", metricsRoute(registry, token, tokenMatches));
 */
export function metricsRoute(
  registry: Registry,
  apiToken: string | undefined,
  tokenMatches: (header: string | undefined, token: string) => boolean,
) {
  const app = new Hono();
  app.get("/", async (c) => {
    if (apiToken && !tokenMatches(c.req.header("authorization"), apiToken)) {
      c.header("WWW-Authenticate", 'Bearer realm="hookline"');
      throw new HooklineError("unauthorized", "a valid bearer token is required");
    }
    const text = await registry.metrics();
    return c.body(text, 200, { "content-type": registry.contentType });
  });
  return app;
}
