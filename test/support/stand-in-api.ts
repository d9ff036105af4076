import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a stand-in API received. */
export interface Received {
  method: string;
  path: string;
  authorization: string;
  body: string;
}

/** `(base, body) => [status, json]`: what a route answers; `base` is the server's URL. */
export type Route = (base: string, body: string) => [number, unknown];

export interface StandInApi {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A provider's API on loopback, at a random port, for system tests: answers `"METHOD /path"`
 * routes with JSON and records every request (unknown ones get a 404 and are recorded too), so a
 * test sees what a real client in a session sent.
 * @example const api = await standInApi({ "POST /api/auth.test": () => [200, { ok: true }] });
 */
export async function standInApi(routes: Record<string, Route>): Promise<StandInApi> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const body = Buffer.concat(chunks).toString("utf8");
      const method = req.method ?? "GET";
      received.push({ method, path, authorization: req.headers.authorization ?? "", body });
      const route = routes[`${method} ${path}`];
      const [status, json] = route ? route(api.url, body) : [404, { message: "Not Found" }];
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const api: StandInApi = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return api;
}
