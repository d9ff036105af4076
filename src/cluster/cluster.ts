import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { type Bus, localBus, redisBus } from "./bus.ts";
import { type LeaseOptions, redisLeases } from "./leases.ts";
import { PgCoordinator } from "./pg-coordinator.ts";
import { redisWorkQueue, type WorkQueue } from "./work-queue.ts";

export type { LeaseOptions } from "./leases.ts";

/**
 * What one instance needs to know about the others. Alone (the emulator, one container) this
 * is an in-process bus and leases that always succeed. With several instances on one Redis,
 * each running session holds a lease; an instance that dies stops renewing its leases, and
 * another instance claims its sessions (`orphans`) and resumes them.
 */
export interface Cluster {
  readonly shared: boolean;
  readonly instanceId: string;
  readonly bus: Bus;
  /** Asynchronous sessions shared by all instances (Redis); absent alone. */
  readonly queue?: WorkQueue;
  /**
   * On PostgreSQL: the database decides who owns each session (owner rows, the queue on them,
   * heartbeats by its clock) and refuses a stale write (see PgCoordinator). Absent elsewhere.
   */
  readonly owners?: Owners;
  /** Takes the lease of a session; false when another instance holds it. */
  claim(sessionId: string): Promise<boolean>;
  release(sessionId: string): Promise<void>;
  /**
   * Gives up the lease of a session this instance will not run after all (it is stopping):
   * the session stays among those looked after, so the next sweep of any instance takes it up.
   */
  abandon(sessionId: string): Promise<void>;
  /** Sessions whose owner stopped renewing; each returned one is now claimed by this instance. */
  orphans(): Promise<string[]>;
  /**
   * Calls `listener` for each session whose lease this instance lost while it held it (it
   * stalled past the lease: another instance took the session over); returns a way to stop.
   * Alone, never.
   */
  onLost?(listener: (sessionId: string) => void): () => void;
  /**
   * Null while this instance's leases are known to be its own (a renewal Redis answered less
   * than half a lease time ago); else, after a stall, a promise that resolves once a renewal
   * has been answered, those found lost told (`onLost`) first. Writes of sessions wait for it,
   * so a woken instance writes nothing for a session taken over meanwhile. Alone, absent.
   */
  fresh?(): Promise<void> | null;
  /**
   * True for the one instance that asks first for `key` within `ttlMs` (a schedule's slot fires
   * once however many instances share the Redis). Alone, always true.
   */
  once(key: string, ttlMs: number): Promise<boolean>;
  /** Lets `key` be taken again before its time is up (the work it guarded is done). */
  forget?(key: string): Promise<void>;
  dispose(): Promise<void>;
}

/** What the session core uses of the PostgreSQL coordinator. */
export type Owners = Pick<
  PgCoordinator,
  | "owner"
  | "create"
  | "enqueue"
  | "write"
  | "holds"
  | "forget"
  | "fenced"
  | "requeue"
  | "release"
  | "takeQueued"
  | "queued"
  | "serve"
  | "poke"
>;

export function localCluster(): Cluster {
  return {
    shared: false,
    instanceId: "local",
    bus: localBus(),
    claim: async () => true,
    release: async () => {},
    abandon: async () => {},
    orphans: async () => [],
    once: async () => true,
    forget: async () => {},
    async dispose() {
      await this.bus.dispose();
    },
  };
}

/**
 * Several instances on one Redis: a bus, the shared work queue, session leases
 * (`redisLeases`) and once-per-slot keys.
 * @example const cluster = redisCluster("redis://127.0.0.1:6379", "hookline", { leaseMs: 15000 });
 */
export function redisCluster(url: string, prefix: string, opts: LeaseOptions = {}): Cluster {
  const leaseMs = opts.leaseMs ?? 15_000;
  const instanceId = randomBytes(8).toString("hex");
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {});
  const bus = redisBus(url, prefix, instanceId);
  const leases = redisLeases(redis, prefix, instanceId, { ...opts, leaseMs });
  const queue = redisWorkQueue({ url, prefix, instanceId, leaseMs, leased: leases.hold });
  return {
    shared: true,
    instanceId,
    bus,
    queue,
    claim: leases.claim,
    release: leases.release,
    abandon: leases.abandon,
    orphans: leases.orphans,
    onLost: leases.onLost,
    fresh: leases.fresh,
    async once(key, ttlMs) {
      return (await redis.set(`${prefix}:once:${key}`, instanceId, "PX", ttlMs, "NX")) === "OK";
    },
    async forget(key) {
      await redis.del(`${prefix}:once:${key}`);
    },
    async dispose() {
      leases.dispose();
      await queue.dispose();
      await bus.dispose();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Instances on one PostgreSQL: it holds the state and decides who owns each session
 * (PgCoordinator); Redis, given, is the bus between them (events to waiting sessions, stop
 * requests, cache invalidation) and nothing else. Without Redis the instance runs alone (a
 * second one is refused at start). Resolves once this instance has joined.
 * @example const cluster = await postgresCluster({ url, table: "hookline_kv", redis: { url: r, base: "hookline" } });
 */
export async function postgresCluster(opts: {
  url: string;
  table: string;
  redis?: { url: string; base: string } | null;
  leaseMs?: number;
  log?: (line: string) => void;
  onLost?: (sessionId: string, why: string) => void;
}): Promise<Cluster> {
  const instanceId = randomBytes(8).toString("hex");
  const lostListeners = new Set<(sessionId: string) => void>();
  const owners = new PgCoordinator({
    url: opts.url,
    table: opts.table,
    bus: Boolean(opts.redis),
    ...(opts.leaseMs !== undefined && { leaseMs: opts.leaseMs }),
    ...(opts.log && { log: opts.log }),
    onLost: (id, why) => {
      opts.onLost?.(id, why);
      for (const listener of lostListeners) listener(id);
    },
  });
  await owners.start();
  const bus = opts.redis ? redisBus(opts.redis.url, opts.redis.base, instanceId) : localBus();
  return {
    shared: Boolean(opts.redis),
    instanceId,
    bus,
    owners,
    claim: (id) => owners.takeQueued(id),
    release: (id) => owners.release(id),
    abandon: (id) => owners.requeue(id),
    orphans: async () => [],
    onLost(listener) {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    once: (key, ttlMs) => owners.once(key, ttlMs),
    forget: (key) => owners.unclaim(key),
    async dispose() {
      await owners.dispose();
      await bus.dispose();
    },
  };
}
