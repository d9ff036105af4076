import { randomBytes } from "node:crypto";
import { type Bus, localBus, redisBus } from "./bus.ts";
import { PgCoordinator } from "./pg-coordinator.ts";

/**
 * What one instance needs to know about the others. Alone (the emulator, one container, a
 * store of one instance such as Redis or LMDB) this is an in-process bus and once-claims that
 * always succeed. A fleet shares one PostgreSQL, which decides who owns each session
 * (`owners`), with Redis as the bus between the instances (docs/scale-out.md).
 */
export interface Cluster {
  readonly shared: boolean;
  readonly instanceId: string;
  readonly bus: Bus;
  /** How long a dead instance's heartbeat, and a held key's claim, lasts (on PostgreSQL). */
  readonly leaseMs?: number;
  /**
   * On PostgreSQL: the database decides who owns each session (owner rows, the queue on them,
   * heartbeats by its clock) and refuses a stale write (see PgCoordinator). Absent elsewhere.
   */
  readonly owners?: Owners;
  /**
   * Calls `listener` for each session this instance lost while it ran it (a write refused, or
   * this instance declared dead: another instance took the session over); returns a way to
   * stop. Alone, absent.
   */
  onLost?(listener: (sessionId: string) => void): () => void;
  /**
   * True for the one instance that asks first for `key` within `ttlMs` (a schedule's slot fires
   * once however many instances share the store). Alone, always true.
   */
  once(key: string, ttlMs: number): Promise<boolean>;
  /** Lets `key` be taken again before its time is up (the work it guarded is done). */
  forget?(key: string): Promise<void>;
  /**
   * Holds `key` for this instance for a lease, renewed by calling again with what the last call
   * gave (`held`); null while another instance holds it. A holder that stops renewing (it died)
   * loses it when the lease is up. Alone (or absent), always held.
   */
  hold?(key: string, held: string | null): Promise<string | null>;
  /** Lets go of a key this instance holds (`held`), for another instance to take at once. */
  letGo?(key: string, held: string): Promise<void>;
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

/**
 * One instance: an in-process bus. `owned`, given, is let go with it (on Redis storage, this
 * instance's mark on the store: src/cluster/redis-alone.ts).
 * @example const cluster = localCluster();
 */
export function localCluster(owned?: { dispose(): Promise<void> } | null): Cluster {
  const bus = localBus();
  return {
    shared: false,
    instanceId: "local",
    bus,
    once: async () => true,
    forget: async () => {},
    hold: async () => "local",
    letGo: async () => {},
    async dispose() {
      await bus.dispose();
      await owned?.dispose();
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
    leaseMs: opts.leaseMs ?? 15_000,
    bus,
    owners,
    onLost(listener) {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    once: (key, ttlMs) => owners.once(key, ttlMs),
    forget: (key) => owners.unclaim(key),
    hold: (key, held) => owners.hold(key, held),
    letGo: (key, held) => owners.unclaim(key, held),
    async dispose() {
      await owners.dispose();
      await bus.dispose();
    },
  };
}
