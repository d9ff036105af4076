import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { createApp } from "../src/app.ts";
import { localCluster, redisCluster } from "../src/cluster/cluster.ts";
import type { Settings } from "../src/config.ts";
import { consoleLogger } from "../src/log.ts";
import { createSecretBox, loadSecretKey } from "../src/secrets.ts";
import { createStorageFromUrl, redisTarget } from "../src/storage/driver.ts";
import { createPythonRuntime } from "./python/runtime.ts";

/** The repository root: python-runtime/ is installed into the venv from here. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface Emulator {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the service on Node: storage, the Python runtime, the Hono app, recovery of sessions
 * left by a previous run. `close()` stops the server, every Python process, and storage.
 * @example const emu = await startEmulator(resolveSettings({ port: 0 }), { log: console.log });
 */
export async function startEmulator(
  settings: Settings,
  opts: { log: (line: string) => void },
): Promise<Emulator> {
  const log = consoleLogger((line) => opts.log(line.trimEnd()));
  const storage = createStorageFromUrl(settings.storage);
  // On Redis, instances share state and signal each other (see docs/scale-out.md).
  const redis = redisTarget(settings.storage);
  const cluster = redis
    ? redisCluster(redis.url, redis.base, { leaseMs: settings.leaseMs })
    : localCluster();
  const runtime = createPythonRuntime({
    dataHome: settings.dataHome,
    repoRoot: REPO_ROOT,
    workerPython: settings.workerPython,
    maxSessions: settings.maxSessions,
    maxWaiting: settings.maxQueued,
    onProgress: (line) => log.info(line),
  });
  const hook = createApp({
    storage,
    runtime,
    secrets: createSecretBox(loadSecretKey(settings.configHome)),
    apiToken: settings.mode === "dev" ? undefined : settings.apiToken,
    log,
    maxBody: settings.maxBody,
    syncTimeoutMs: settings.syncTimeoutMs,
    workflowTimeoutMs: settings.workflowTimeoutMs,
    maxActiveSessions: settings.maxSessions + settings.maxQueued,
    evictAfterMs: settings.evictAfterMs,
    cluster,
    sweepMs: Math.max(100, settings.leaseMs / 3),
    retention: { sessionsPerProject: settings.retainSessions, events: settings.retainEvents },
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolvePromise, reject) => {
    const s = serve(
      {
        fetch: hook.app.fetch,
        hostname: settings.host,
        port: settings.port,
        serverOptions: { maxHeaderSize: 80 * 1024 },
      },
      () => resolvePromise(s),
    );
    s.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  const recovered = await hook.sessions.recover();
  if (recovered.resumed || recovered.interrupted) {
    log.info(
      `recovered sessions: ${recovered.resumed} resumed, ${recovered.interrupted} interrupted`,
    );
  }
  let closing: Promise<void> | null = null;
  return {
    url: `http://${settings.host}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        await new Promise<void>((r) => {
          server.close(() => r());
          // Held sync requests and SSE watchers must not keep the process alive.
          (server as import("node:http").Server).closeAllConnections?.();
        });
        hook.sessions.shutdown();
        await runtime.dispose();
        await hook.dispose();
        await cluster.dispose();
        await storage.dispose();
      })();
      return closing;
    },
  };
}
