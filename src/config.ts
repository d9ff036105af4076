import { homedir } from "node:os";
import { join } from "node:path";

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
  /** unstorage driver: `memory:`, `fs:<dir>` (default under the data home) or `redis://…` */
  storage: string;
  /**
   * The Redis of the bus and the session leases when storage is not Redis (`SVC_REDIS_URL`,
   * `redis://…[?base=prefix]`); with `redis://` storage the storage's Redis is used.
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
  /** With several instances (Redis): how long a dead instance's sessions stay claimed, ms. */
  leaseMs: number;
  /** Ended sessions kept per project; events kept in all. Older ones are deleted. */
  retainSessions: number;
  retainEvents: number;
}

function int(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${name}: expected a whole number, got "${value}"`);
  return n;
}

/** Parse a duration given as seconds ("30", "0.5") into ms. */
function seconds(value: string | undefined, name: string, fallbackMs: number): number {
  if (value === undefined || value === "") return fallbackMs;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected seconds, got "${value}"`);
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
  return {
    dataHome,
    configHome: flags.configHome ?? dirs.configHome,
    mode: flags.mode ?? (env.SVC_MODE === "prod" ? "prod" : "dev"),
    host: flags.host ?? env.SVC_HOST ?? DEFAULT_HOST,
    port: flags.port ?? int(env.SVC_PORT, "SVC_PORT", DEFAULT_PORT),
    storage: flags.storage ?? env.SVC_STORAGE ?? `fs:${join(dataHome, "store")}`,
    redisUrl: flags.redisUrl ?? redisUrl(env.SVC_REDIS_URL),
    workerPython: flags.workerPython ?? (env.SVC_WORKER_PYTHON || undefined),
    apiToken: flags.apiToken ?? (env.SVC_API_TOKEN || undefined),
    maxBody: flags.maxBody ?? int(env.SVC_MAX_BODY, "SVC_MAX_BODY", 1024 * 1024),
    syncTimeoutMs: flags.syncTimeoutMs ?? seconds(env.SVC_SYNC_TIMEOUT, "SVC_SYNC_TIMEOUT", 30_000),
    workflowTimeoutMs:
      flags.workflowTimeoutMs ?? seconds(env.SVC_WORKFLOW_TIMEOUT, "SVC_WORKFLOW_TIMEOUT", 10_000),
    maxSessions: flags.maxSessions ?? int(env.SVC_MAX_SESSIONS, "SVC_MAX_SESSIONS", 32),
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
  };
}

/** What `cli` talks to. */
export function serviceUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.SVC_URL || `http://${DEFAULT_HOST}:${DEFAULT_PORT}`).replace(/\/+$/, "");
}
