/**
 * The bare route our async webhook is measured against, in a process of its own as our service
 * is: read the body, answer 202, on `@hono/node-server` like the service. Prints `{"port": n}`
 * when it listens and exits when its stdin closes.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const app = new Hono();
app.post("/", async (c) => {
  await c.req.arrayBuffer();
  return c.json({ accepted: true }, 202);
});
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
