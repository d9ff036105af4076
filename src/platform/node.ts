import { markRedisAlone } from "../cluster/redis-alone.ts";
import type { Settings } from "../config.ts";
import { type FrontGate, frontGate } from "../front/gate.ts";
import { type FrontDoor, frontThreadFits } from "../front/host.ts";
import { consoleLogger, type Logger } from "../log.ts";
import { serviceLogger } from "../observe/log-json.ts";
import { loadTracing } from "../observe/tracing.ts";
import { packageRoot } from "../package-root.ts";
import { checkWorkerPython } from "../runtime/python/python.ts";
import { removeStaleRunDirs } from "../runtime/python/run-dirs.ts";
import { createPythonRuntime } from "../runtime/python/runtime.ts";
import { createSecretBox, loadSecretKey } from "../secrets.ts";
import { replayAccepts } from "../storage/accept-log-replay.ts";
import { createStorageFromUrl, redisTarget } from "../storage/driver.ts";
import { upgradeFormat } from "../storage/format.ts";
import { checkSecretKey } from "../storage/key-check.ts";
import { describeStorage } from "../storage-url.ts";
import { type ComposedService, composeApp, type ServiceLimits } from "./compose.ts";
import { createDrain } from "./drain.ts";
import { hostFacts } from "./host-facts.ts";
import { joinCluster } from "./join-cluster.ts";
import { type Listening, listenService } from "./listen.ts";
import { startScheduler } from "./schedules.ts";

/** The package root (a checkout, or where npm installed it): python-runtime/ lives here. */
export const REPO_ROOT = packageRoot(import.meta.url);

export interface Service {
  url: string;
  port: number;
  close(): Promise<void>;
  /**
   * A stop signal: readiness false and new webhooks refused at once, no queued session taken;
   * held sync requests and the non-durable sessions running here given up to `SVC_DRAIN` to
   * finish, then `close()` (durable sessions left to resume, elsewhere at once in a fleet; the
   * others interrupted; every Python process reaped).
   */
  stop(): Promise<void>;
  /** The sessions that start here, their ends and prints: the dev terminal's line per run. */
  sessions: Pick<ComposedService["sessions"], "onStarted" | "whenEnded"> & {
    prints(sessionId: string): Promise<string[]>;
  };
}

export interface ServiceOptions {
  log: (line: string) => void;
  /**
   * The Python sessions run on, given the service's log for what it says while it makes it (in
   * the log's format: `SVC_LOG_FORMAT=json` makes every line one JSON object). Default:
   * `SVC_WORKER_PYTHON` (else `python3` on PATH), which must already import `workflow_sdk`; the
   * emulator passes its venv instead.
   */
  python?: (log: Logger) => Promise<string>;
}

/**
 * Starts the service on Node: storage, the Python runtime, the Hono app, recovery of sessions
 * left by a previous run. `close()` stops the server, every Python process, and storage.
 * `cli up` (through the emulator) and the container entry both start it.
 * @example const svc = await startService(resolveSettings({ port: 0 }), { log: console.log });
 */
export async function startService(settings: Settings, opts: ServiceOptions): Promise<Service> {
  const write = (line: string) => opts.log(line.trimEnd());
  // The log names the session's trace when the app has one: the app is made below.
  let hook: ComposedService | undefined;
  const log = serviceLogger(settings.logFormat, write, () => hook?.observer ?? null, consoleLogger);
  // OpenTelemetry is imported only when the OTEL_* variables ask for traces.
  const tracing = await loadTracing(process.env, (msg) => log.warn(msg));
  const { storage, secretKey, mark } = await openStorage(settings, log);
  const stale = await removeStaleRunDirs();
  if (stale) log.info(`removed ${stale} temp folders of service processes that are gone`);
  const { redis, cluster } = await joinCluster(settings, log, mark);
  // Webhooks on a thread of their own where the store allows (src/front/): the gate is shared.
  const fits = frontThreadFits(settings, { cluster: cluster.shared, tracing: tracing !== null });
  const gate = fits ? frontGate(settings.maxSessions + settings.maxQueued) : null;
  const runtime = pythonRuntime(settings, opts, log, gate);
  const secrets = createSecretBox(secretKey);
  // The listening address is known once the server listens; SVC_PUBLIC_URL wins over it. Behind
  // a router without SVC_PUBLIC_URL, URLs made for a request take the origin the router forwarded.
  let listening = `http://${settings.host}:${settings.port}`;
  const configured = settings.publicUrl;
  let door: FrontDoor | null = null;
  hook = composeApp({
    services: { storage, runtime, secrets, cluster, ...(gate ? { front: gate } : {}) },
    access: {
      apiToken: settings.mode === "dev" ? undefined : settings.apiToken,
      ...(configured ? { publicUrl: () => configured } : {}),
      listeningUrl: () => listening,
    },
    limits: appLimits(settings),
    dedup: { windowMs: settings.dedupWindowMs, redis },
    observe: {
      log,
      tracing,
      runtimeGauges: () => runtime.gauges(),
      elsewhere: () => door?.metrics() ?? Promise.resolve([]),
    },
    onChanged(projectId) {
      void scheduler?.reload(projectId);
      door?.invalidate(projectId);
    },
    host: hostFacts(settings, opts),
  });
  let scheduler: Awaited<ReturnType<typeof startScheduler>> | null = null;
  const drain = createDrain((request, env) => hook.app.fetch(request, env));
  const target = { ...hook.sessions.front, log };
  const server = await listenService(settings, drain.fetch, gate && { gate, target });
  door = server.front;
  const { port } = server;
  listening = `http://${urlHost(settings.host)}:${port}`;
  await resumeWork(hook, log);
  // After recovery: a missed schedule's session must not be taken for one to resume.
  scheduler = await startScheduler({ hook, cluster, log });
  hook.keepers.start(); // webhooks, Google watches, Discord gateways (docs/connections.md)
  const parts = { scheduler, hook, runtime, cluster, storage };
  return serviceHandle(settings, log, { server, gate, drain }, parts);
}

/**
 * The store, ready to read: its format upgraded, and the secret key checked against it before
 * anything reads sealed data (a key other than the store's refuses to start).
 */
async function openStorage(settings: Settings, log: Logger) {
  // Redis as the only store serves one instance: a second is refused before it reads anything.
  const alone = redisTarget(settings.storage);
  const mark = alone ? await markRedisAlone(alone) : null;
  const storage = createStorageFromUrl(settings.storage);
  try {
    // Webhooks a killed front door answered before their commit landed (docs/storage.md).
    const replayed = await replayAccepts(settings.storage, storage);
    if (replayed) log.info(`storage: ${replayed} accepted webhooks committed from the accept log`);
    await upgradeFormat(storage, log);
    const secretKey = loadSecretKey(settings.configHome);
    if ((await checkSecretKey(storage, secretKey)) === "written")
      log.info("secret key: check written");
    const engine = describeStorage(settings.storage, settings.dataHome);
    // An install from before LMDB was the default: used as it is, never migrated silently.
    if (engine.detected)
      log.info(`storage: ${engine.text}; new data homes use lmdb (docs/storage.md)`);
    return { storage, secretKey, mark };
  } catch (e) {
    await storage.dispose();
    await mark?.dispose();
    throw e;
  }
}

function pythonRuntime(
  settings: Settings,
  opts: ServiceOptions,
  log: Logger,
  gate: FrontGate | null,
) {
  return createPythonRuntime({
    dataHome: settings.dataHome,
    python: opts.python
      ? () => opts.python!(log)
      : () => checkWorkerPython(settings.workerPython ?? "python3", REPO_ROOT),
    slots: {
      maxRunning: settings.maxSessions,
      maxWaiting: settings.maxQueued,
      ...(gate && { onFull: (full: boolean) => gate.setFull(full) }),
    },
    pip: { onProgress: (line) => log.info(line) },
    limits: {
      memoryMib: settings.sessionMemoryMib,
      files: settings.sessionFiles,
      cpuSeconds: settings.sessionCpuSeconds,
      processes: settings.sessionProcesses,
      priority: settings.sessionPriority,
    },
    reuse: {
      maxSessions: settings.reuseSessions,
      idleMs: settings.reuseIdleMs,
      maxIdle: settings.reusePool,
      maxIdleTotal: settings.reusePool,
    },
  });
}

/** The app's limits, from the settings: a session waiting for a slot counts as alive. */
function appLimits(settings: Settings): ServiceLimits {
  return {
    requests: {
      maxBody: settings.maxBody,
      syncTimeoutMs: settings.syncTimeoutMs,
      bodyTimeoutMs: settings.bodyTimeoutMs,
    },
    sessions: {
      workflowTimeoutMs: settings.workflowTimeoutMs,
      maxActive: settings.maxSessions + settings.maxQueued,
      slots: settings.maxSessions,
      evictAfterMs: settings.evictAfterMs,
      // A held request that cannot expect its process within half its time-out is refused
      // at once (503): the other half is the handler's, to reach its outcome.
      heldWaitMs: settings.syncTimeoutMs / 2,
      // Async sessions the front door hands over wait out its burst (docs/limits.md).
      burstYieldMs: settings.burstYieldMs,
    },
    retention: { sessionsPerProject: settings.retainSessions, events: settings.retainEvents },
  };
}

/** Once listening: what a previous run left is brought back, and readiness starts. */
async function resumeWork(hook: ComposedService, log: Logger): Promise<void> {
  // Listening already (healthz answers); /readyz says 503 until this is done. Shared work is
  // taken only then: a session taken before would wait here for a Python environment while
  // ready instances could run it (a failed preparation takes work all the same: its sessions
  // then say why they cannot run).
  void hook.readiness.start().finally(() => hook.sessions.serve());
  // The overview's counters for sessions stored before they existed: once, in the background.
  void hook.backfill.start();
  const recovered = await hook.sessions.recover();
  if (recovered.resumed || recovered.started || recovered.interrupted) {
    const { resumed, started, interrupted } = recovered;
    log.info(
      `recovered sessions: ${resumed} resumed, ${started} never started (run now), ${interrupted} interrupted`,
    );
  }
}

/** What the service closes, in this order. */
interface ServiceParts {
  scheduler: Awaited<ReturnType<typeof startScheduler>>;
  hook: ComposedService;
  runtime: ReturnType<typeof createPythonRuntime>;
  cluster: Awaited<ReturnType<typeof joinCluster>>["cluster"];
  storage: ReturnType<typeof createStorageFromUrl>;
}

/** `stop` (drain, then close) and `close` (the server, then every part), each done once. */
function serviceHandle(
  settings: Settings,
  log: Logger,
  http: { server: Listening; gate: FrontGate | null; drain: ReturnType<typeof createDrain> },
  parts: ServiceParts,
): Service {
  const { server, gate, drain } = http;
  const { port } = server;
  const closeServer = (graceMs: number) => server.close(graceMs);
  let closing: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  const service: Service = {
    url: `http://${urlHost(settings.host)}:${port}`,
    port,
    sessions: {
      onStarted: (listener) => parts.hook.sessions.onStarted(listener),
      whenEnded: (id) => parts.hook.sessions.whenEnded(id),
      prints: async (id) =>
        (await parts.hook.stores.logs.get(id)).flatMap((e) => (e.kind === "print" ? [e.text] : [])),
    },
    stop() {
      stopping ??= (async () => {
        const grace = `${settings.drainMs / 1000} s`;
        log.info(`stopping: held requests and non-durable sessions have ${grace} to finish`);
        gate?.setDraining(true); // the front door sends webhooks to the drain, which refuses them
        const sessionsDone = parts.hook.sessions.drain();
        const answered = Promise.all([sessionsDone, gate?.idle()]).then(() => {});
        await drain.drain(settings.drainMs, answered);
        // The last answers are still being written: connections get a moment to go idle.
        await closeServer(1000);
        await service.close();
      })();
      return stopping;
    },
    close() {
      closing ??= (async () => {
        // Held sync requests and SSE watchers must not keep the process alive.
        await closeServer(0);
        parts.scheduler.dispose();
        await parts.scheduler.idle(); // a firing under way writes its event before storage closes
        gate?.setClosing(true);
        parts.hook.sessions.shutdown();
        await parts.runtime.dispose();
        await parts.hook.dispose();
        await parts.cluster.dispose();
        await parts.storage.dispose();
      })();
      return closing;
    },
  };
  return service;
}

/** A host as a URL spells it: an IPv6 address in brackets. */
function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
