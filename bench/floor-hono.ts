/**
 * The bare route our async webhook is measured against, in a process of its own as our service
 * is: read the body, answer 202, on `@hono/node-server` like the service. Prints `{"port": n}`
 * when it listens and exits when its stdin closes.
 *
 * With `--commit <folder>`, the durable floor: before its 202 the route commits the body as one
 * record through the service's own LMDB driver at the default store's sync level (`normal`), so
 * that the accept can be read beside what a route that stores what it answers costs at the least.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { lmdbDriver } from "../src/storage/drivers/lmdb.ts";

const at = process.argv.indexOf("--commit");
const store = at === -1 ? null : lmdbDriver({ path: process.argv[at + 1]!, sync: "normal" });

const app = new Hono();
app.post("/", async (c) => {
  const body = await c.req.text();
  if (store) {
    const id = randomUUID();
    const record = JSON.stringify({ id, data: body, created_at: new Date().toISOString() });
    await store.batch([{ key: `events:${id}`, value: record }]);
  }
  return c.json({ accepted: true }, 202);
});
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
process.stdin.resume();
process.stdin.on("end", () => {
  void Promise.resolve(store?.dispose?.()).finally(() => process.exit(0));
});
