/**
 * The front door's thread (a worker of the service's process, started by host.ts): it listens
 * on the service's address, takes asynchronous webhooks itself and passes everything else to the
 * session host's own server. It opens the same store (LMDB opens one environment from several
 * threads) and answers nothing from memory the host could change without telling it.
 */
import { createServer } from "node:http";
import { parentPort, workerData } from "node:worker_threads";
import type { Settings } from "../config.ts";
import { createObserver } from "../observe/observer.ts";
import { closeServer, configureServer, serverOptions } from "../platform/server-options.ts";
import { createStores } from "../storage/records.ts";
import { guardStorage } from "../storage/unavailable.ts";
import { frontDoor } from "./door.ts";
import { frontGate } from "./gate.ts";
import { frontStorage, landing } from "./landing.ts";
import { gatherPosts, type HostMessage } from "./messages.ts";
import { nameFrontThread } from "./priority.ts";
import { hostProxy } from "./proxy.ts";

/** What the host starts the front with (structured-cloned: data only). */
export interface FrontData {
  settings: Settings;
  /** The host's own server: a Unix socket only this process knows. */
  hostSocket: string;
  gate: SharedArrayBuffer;
  maxActive: number;
}

nameFrontThread();

const port = parentPort!;
const data = workerData as FrontData;
const post = gatherPosts((batch) => port.postMessage(batch));
const log = {
  info: (text: string) => post({ t: "log", level: "info", text }),
  warn: (text: string) => post({ t: "log", level: "warn", text }),
  error: (text: string, err?: unknown) =>
    post({ t: "log", level: "error", text: err ? `${text}: ${String(err)}` : text }),
};

const { settings } = data;
const observer = createObserver({ tracing: null, log });
const gate = frontGate(data.maxActive, data.gate);
const { storage, accepts } = frontStorage(settings.storage, (err) => {
  // The webhook was answered: its batch stays in the accept log, committed at the next start.
  // Thrown, this ends the thread, and with it the service (host.ts).
  setImmediate(() => {
    throw new Error("an accepted webhook's commit failed; the service stops", { cause: err });
  });
});
const stores = createStores(guardStorage(storage, observer.storageCall));
const proxy = hostProxy(data.hostSocket);
const toHost = landing(accepts, gate, post);
const door = frontDoor({
  stores,
  gate,
  limits: {
    maxBody: settings.maxBody,
    bodyTimeoutMs: settings.bodyTimeoutMs,
    syncTimeoutMs: settings.syncTimeoutMs,
  },
  post: toHost.post,
  forward: toHost.forward(proxy.forward),
  observer,
  log,
});
const server = createServer(serverOptions(settings), door.handle);
configureServer(server, settings);
server.once("error", (err) => post({ t: "failed", message: err.message }));
server.listen(settings.port, settings.host, () => {
  const address = server.address();
  post({ t: "listening", port: typeof address === "object" && address ? address.port : 0 });
});

port.on("message", (m: HostMessage) => {
  if (m.t === "metrics")
    void observer.metrics.json().then((json) => post({ t: "metrics", id: m.id, json }));
  else if (m.t === "close") void close(m.graceMs);
  else door.heard(m);
});

/** Stops listening, lets connections finish for `graceMs`, then closes the store. */
async function close(graceMs: number): Promise<void> {
  await closeServer(server, graceMs);
  proxy.dispose();
  await observer.dispose();
  await accepts?.close();
  await storage.dispose();
  post({ t: "closed" });
}
