import { homedir } from "node:os";
import { join } from "node:path";
import { defaultStorageUrl, parseStorageUrl } from "./storage-url.ts";

/** Where Hookline keeps data and config, per the XDG base-directory convention. */
export interface Dirs {
  dataHome: string;
  configHome: string;
}

/**
 * Resolve the data and config homes from the environment.
 * @example resolveDirs({ XDG_DATA_HOME: "/d" }).dataHome // "/d/hookline"
 */
export function resolveDirs(env: NodeJS.ProcessEnv = process.env): Dirs {
  const home = env.HOME || homedir();
  return {
    dataHome: join(env.XDG_DATA_HOME || join(home, ".local", "share"), "hookline"),
    configHome: join(env.XDG_CONFIG_HOME || join(home, ".config"), "hookline"),
  };
}

export const DEFAULT_PORT = 9980;
export const DEFAULT_HOST = "127.0.0.1";

/** Service settings: flags win over `SVC_*` variables, which win over these defaults. */
export interface Settings extends Dirs {
  mode: "dev" | "prod";
  host: string;
  port: number;
  /** `lmdb:<dir>` (default: `<dataHome>/db`, or an fs store found there), `fs:<dir>`, `memory:`, `redis://…` */
  storage: string;
  /**
   * The Redis of the bus between instances on PostgreSQL storage (`SVC_REDIS_URL`,
   * `redis://…[?base=prefix]`); other stores serve one instance and use none.
   */
  redisUrl?: string;
  workerPython: string | undefined;
  apiToken: string | undefined;
  /** Largest accepted webhook body, bytes. */
  maxBody: number;
  /** How long a synchronous webhook waits for its final outcome, ms. */
  syncTimeoutMs: number;
  /** Longest stretch of workflow code outside activities, ms. */
  workflowTimeoutMs: number;
  /** Python sessions that run at once; more wait in a queue. */
  maxSessions: number;
  /** Sessions that may wait for a slot; past it webhooks answer 503. */
  maxQueued: number;
  /** A durable session waiting in next_event this long gives up its process, ms (-1: never). */
  evictAfterMs: number;
  /** A fleet on PostgreSQL: how long an instance may miss heartbeats before it is dead, ms. */
  leaseMs: number;
  /** Ended sessions kept per project; events kept in all. Older ones are deleted. */
  retainSessions: number;
  retainEvents: number;
  /** Longest wait for a request's headers, ms; then 408 and the connection closes. */
  headersTimeoutMs: number;
  /** Longest wait for a whole request (headers and body), ms. */
  requestTimeoutMs: number;
  /** Longest a webhook route waits for the body once the headers are in, ms; then 408. */
  bodyTimeoutMs: number;
  /** Connections open at once; more are closed as soon as they are accepted. */
  maxConnections: number;
  /** How long a delivery key (Idempotency-Key, webhook-id, a trigger's dedup_header) is remembered, ms. */
  dedupWindowMs: number;
  /**
   * The service's external base URL (`SVC_PUBLIC_URL`), for `get_webhook_url` and
   * `get_store_public_url`; undefined: the listening address.
   */
  publicUrl: string | undefined;
  /** Per-session limits of Python processes (0: none): address space MiB, open files, CPU s, processes. */
  sessionMemoryMib: number;
  sessionFiles: number;
  sessionCpuSeconds: number;
  sessionProcesses: number;
  /** CPU priority of session processes (`SVC_SESSION_PRIORITY`): idle, low (default) or normal. */
  sessionPriority: SessionPriority;
  /**
   * Processes of `reuse_process` triggers (docs/sessions.md, "Reused processes"): sessions one
   * process runs, how long one stays idle (ms), and how many are kept idle (per deployment and
   * `call`, and in all; 0: none, so every session runs on a fresh process).
   */
  reuseSessions: number;
  reuseIdleMs: number;
  reusePool: number;
  /** On SIGTERM, how long held sync requests and non-durable sessions may take to finish, ms. */
  drainMs: number;
  /** The service log: `text` (human lines) or `json` (one object a line; docs/observability.md). */
  logFormat: "text" | "json";
  /**
   * Whether asynchronous webhooks are taken on a thread of their own, apart from the sessions'
   * work (`SVC_FRONT_THREAD`, on by default where the store allows; docs/architecture.md).
   */
  frontThread: boolean;
  /**
   * The longest an async session waits to start while the front door is taking requests (a
   * burst keeps the cores for its accepts), ms; 0: sessions start at once (`SVC_BURST_YIELD`).
   */
  burstYieldMs: number;
}

/**
 * `idle`: sessions take the SCHED_IDLE policy (nice 19 where there is none) and run on what the
 * service leaves; `low`: nice 5; `normal`: the service's own priority. See docs/limits.md.
 */
export type SessionPriority = "idle" | "low" | "normal";

function int(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    const what = min > 0 ? `a whole number of at least ${min}` : "a whole number";
    throw new Error(`${name}: expected ${what}, got "${value}"`);
  }
  return n;
}

/** The longest a Node timer waits (about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Parse a duration given as seconds ("30", "0.5") into ms; `maxMs` bounds it. */
function seconds(value: string | undefined, name: string, fallbackMs: number, maxMs = Infinity) {
  if (value === undefined || value === "") return fallbackMs;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n * 1000 > maxMs) {
    const most = Number.isFinite(maxMs) ? ` of at most ${Math.floor(maxMs / 1000)}` : "";
    throw new Error(`${name}: expected seconds${most}, got "${value}"`);
  }
  return Math.round(n * 1000);
}

function redisUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (!/^rediss?:\/\//i.test(value)) {
    throw new Error(`SVC_REDIS_URL: expected redis://… or rediss://…, got "${value}"`);
  }
  return value;
}

/**
 * Settings from flags, then `SVC_*` variables, then defaults. Throws a one-line Error on a bad value.
 * @example resolveSettings({ port: 0 }, {}).port // 0
 */
export function resolveSettings(
  flags: Partial<Settings> = {},
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  const dirs = resolveDirs(env);
  const dataHome = flags.dataHome ?? dirs.dataHome;
  const storage = flags.storage ?? env.SVC_STORAGE ?? defaultStorageUrl(dataHome);
  parseStorageUrl(storage); // an unsupported scheme is refused here, before anything starts
  const maxSessions = flags.maxSessions ?? int(env.SVC_MAX_SESSIONS, "SVC_MAX_SESSIONS", 32);
  return {
    dataHome,
    configHome: flags.configHome ?? dirs.configHome,
    mode: flags.mode ?? (env.SVC_MODE === "prod" ? "prod" : "dev"),
    host: flags.host ?? env.SVC_HOST ?? DEFAULT_HOST,
    port: flags.port ?? int(env.SVC_PORT, "SVC_PORT", DEFAULT_PORT),
    storage,
    redisUrl: flags.redisUrl ?? redisUrl(env.SVC_REDIS_URL),
    workerPython: flags.workerPython ?? (env.SVC_WORKER_PYTHON || undefined),
    apiToken: flags.apiToken ?? (env.SVC_API_TOKEN || undefined),
    maxBody: flags.maxBody ?? int(env.SVC_MAX_BODY, "SVC_MAX_BODY", 1024 * 1024),
    syncTimeoutMs: flags.syncTimeoutMs ?? seconds(env.SVC_SYNC_TIMEOUT, "SVC_SYNC_TIMEOUT", 30_000),
    workflowTimeoutMs:
      flags.workflowTimeoutMs ?? seconds(env.SVC_WORKFLOW_TIMEOUT, "SVC_WORKFLOW_TIMEOUT", 10_000),
    maxSessions,
    maxQueued: flags.maxQueued ?? int(env.SVC_MAX_QUEUED, "SVC_MAX_QUEUED", 10_000),
    evictAfterMs:
      flags.evictAfterMs ??
      (env.SVC_EVICT_AFTER === "never"
        ? -1
        : env.SVC_EVICT_AFTER === "0"
          ? 0
          : seconds(env.SVC_EVICT_AFTER, "SVC_EVICT_AFTER", 2000)),
    leaseMs: flags.leaseMs ?? seconds(env.SVC_LEASE, "SVC_LEASE", 15_000),
    retainSessions:
      flags.retainSessions ?? int(env.SVC_RETAIN_SESSIONS, "SVC_RETAIN_SESSIONS", 10_000),
    retainEvents: flags.retainEvents ?? int(env.SVC_RETAIN_EVENTS, "SVC_RETAIN_EVENTS", 100_000),
    headersTimeoutMs:
      flags.headersTimeoutMs ?? seconds(env.SVC_HEADERS_TIMEOUT, "SVC_HEADERS_TIMEOUT", 10_000),
    requestTimeoutMs:
      flags.requestTimeoutMs ?? seconds(env.SVC_REQUEST_TIMEOUT, "SVC_REQUEST_TIMEOUT", 60_000),
    bodyTimeoutMs: flags.bodyTimeoutMs ?? seconds(env.SVC_BODY_TIMEOUT, "SVC_BODY_TIMEOUT", 30_000),
    maxConnections:
      flags.maxConnections ?? int(env.SVC_MAX_CONNECTIONS, "SVC_MAX_CONNECTIONS", 1024),
    dedupWindowMs:
      flags.dedupWindowMs ?? seconds(env.SVC_DEDUP_WINDOW, "SVC_DEDUP_WINDOW", 24 * 3600_000),
    publicUrl: flags.publicUrl ?? baseUrl(env.SVC_PUBLIC_URL, "SVC_PUBLIC_URL"),
    ...processSettings(flags, env, maxSessions),
    drainMs: flags.drainMs ?? seconds(env.SVC_DRAIN, "SVC_DRAIN", 10_000),
    logFormat: flags.logFormat ?? logFormat(env.SVC_LOG_FORMAT),
    frontThread: flags.frontThread ?? onOff(env.SVC_FRONT_THREAD, "SVC_FRONT_THREAD", true),
    burstYieldMs:
      flags.burstYieldMs ??
      (env.SVC_BURST_YIELD === "0"
        ? 0
        : seconds(env.SVC_BURST_YIELD, "SVC_BURST_YIELD", 500, 60_000)),
  };
}

function onOff(value: string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (value === "on") return true;
  if (value === "off") return false;
  throw new Error(`${name}: expected on or off, got "${value}"`);
}

/** What bounds a session's Python process, and the processes kept for `reuse_process`. */
function processSettings(flags: Partial<Settings>, env: NodeJS.ProcessEnv, maxSessions: number) {
  return {
    sessionMemoryMib:
      flags.sessionMemoryMib ?? int(env.SVC_SESSION_MEMORY, "SVC_SESSION_MEMORY", 1024),
    sessionFiles: flags.sessionFiles ?? int(env.SVC_SESSION_FILES, "SVC_SESSION_FILES", 1024),
    sessionCpuSeconds: flags.sessionCpuSeconds ?? int(env.SVC_SESSION_CPU, "SVC_SESSION_CPU", 0),
    sessionProcesses:
      flags.sessionProcesses ?? int(env.SVC_SESSION_PROCESSES, "SVC_SESSION_PROCESSES", 256),
    sessionPriority: flags.sessionPriority ?? sessionPriority(env.SVC_SESSION_PRIORITY),
    reuseSessions:
      flags.reuseSessions ?? int(env.SVC_REUSE_SESSIONS, "SVC_REUSE_SESSIONS", 1000, 1),
    reuseIdleMs:
      flags.reuseIdleMs ?? seconds(env.SVC_REUSE_IDLE, "SVC_REUSE_IDLE", 60_000, MAX_TIMER_MS),
    // As many idle as may run at once: a burst's sessions end together, the next take them.
    reusePool: flags.reusePool ?? int(env.SVC_REUSE_POOL, "SVC_REUSE_POOL", maxSessions),
    drainMs: flags.drainMs ?? seconds(env.SVC_DRAIN, "SVC_DRAIN", 10_000),
    logFormat: flags.logFormat ?? logFormat(env.SVC_LOG_FORMAT),
  };
}

function sessionPriority(value: string | undefined): SessionPriority {
  if (!value) return "low";
  if (value === "idle" || value === "low" || value === "normal") return value;
  throw new Error(`SVC_SESSION_PRIORITY: expected idle, low or normal, got "${value}"`);
}

function logFormat(value: string | undefined): "text" | "json" {
  if (!value) return "text";
  if (value === "text" || value === "json") return value;
  throw new Error(`SVC_LOG_FORMAT: expected text or json, got "${value}"`);
}

/** An http(s) base URL without a trailing slash; undefined when unset. */
function baseUrl(value: string | undefined, name: string): string | undefined {
  if (!value) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw new Error(`${name}: expected an http(s) base URL, got "${value}"`);
  }
  return value.replace(/\/+$/, "");
}

/** What `cli` talks to. */
export function serviceUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.SVC_URL || `http://${DEFAULT_HOST}:${DEFAULT_PORT}`).replace(/\/+$/, "");
}
