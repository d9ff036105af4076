import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { type Bus, localBus, redisBus } from "./bus.ts";
import { redisWorkQueue, type WorkQueue } from "./work-queue.ts";

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
   * True for the one instance that asks first for `key` within `ttlMs` (a schedule's slot fires
   * once however many instances share the Redis). Alone, always true.
   */
  once(key: string, ttlMs: number): Promise<boolean>;
  /** Lets `key` be taken again before its time is up (the work it guarded is done). */
  forget?(key: string): Promise<void>;
  dispose(): Promise<void>;
}

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

export interface LeaseOptions {
  /** How long a lease lasts unrenewed (it is renewed every third of it); default 15 s. */
  leaseMs?: number;
  /**
   * A session whose lease this instance lost while it held it (it stalled past the lease, was
   * thought dead): another instance holds it (`owner`), or it lapsed or was released by one that
   * took the session over (`owner` empty). This instance stops renewing it.
   */
  onLost?: (sessionId: string, owner: string) => void;
}

/**
 * Renews our leases, each only while it is ours, or gone because Redis restarted without
 * persistence (it lost them all). Redis keeps an epoch, a random value made when the key is
 * missing: one other than the epoch this instance knows (ARGV[3]; empty when not known yet)
 * means Redis restarted. A lease gone without a restart lapsed or was released by an instance
 * that took the session over while this one stalled; like one another instance holds, it is
 * left, and returned as `[id, owner]` (owner empty when gone). Returns the epoch first.
 */
const RENEW_SCRIPT = `local epoch = redis.call('get', KEYS[2])
local restarted = ARGV[3] == ''
if epoch == false then
  epoch = ARGV[4]
  redis.call('set', KEYS[2], epoch)
  restarted = true
elseif epoch ~= ARGV[3] then
  restarted = true
end
local out = {epoch}
for i = 3, #KEYS do
  local owner = redis.call('get', KEYS[i])
  if owner == ARGV[1] or (owner == false and restarted) then
    redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])
    redis.call('sadd', KEYS[1], ARGV[i + 2])
  else
    out[#out + 1] = ARGV[i + 2]
    out[#out + 1] = owner or ''
  end
end
return out`;

/**
 * A free lease, and the live set, in one step: a session is never leased without being looked
 * after.
 */
const TAKE_FREE =
  "if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then redis.call('sadd', KEYS[2], ARGV[3]) return 1 end";
/** A free lease, or one that is ours already. */
const CLAIM_SCRIPT = `${TAKE_FREE} if redis.call('get', KEYS[1]) == ARGV[1] then return 1 end return 0`;
/**
 * A free lease only: a session whose lease this instance holds already (its queue took it a
 * moment ago, and is starting it) is not an orphan.
 */
const ADOPT_SCRIPT = `${TAKE_FREE} return 0`;
/**
 * Only our own lease: compare and delete in one step. The session leaves the live set unless
 * another instance holds it (that one looks after it).
 */
const RELEASE_SCRIPT =
  "local owner = redis.call('get', KEYS[1]) if owner == ARGV[1] then redis.call('del', KEYS[1]) end if owner == ARGV[1] or owner == false then redis.call('srem', KEYS[2], ARGV[2]) end return 1";
/** Our own lease gone, the session left in the live set for a sweep to find. */
const ABANDON_SCRIPT =
  "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) end return 1";

/**
 * Renews the leases in `held` every third of a lease time (RENEW_SCRIPT), against the epoch
 * Redis had when this instance started; a lease lost leaves `held` and is told to `lost`.
 * Returns a way to stop.
 */
function renewing(
  redis: Redis,
  prefix: string,
  instanceId: string,
  leaseMs: number,
  held: Set<string>,
  lost: (sessionId: string, owner: string) => void,
): () => void {
  const live = `${prefix}:live`;
  const epochKey = `${prefix}:epoch`;
  // The epoch this instance knows: Redis's when it started (made by the first instance).
  let epoch = "";
  const known = redis
    .set(epochKey, randomBytes(8).toString("hex"), "NX")
    .then(() => redis.get(epochKey))
    .then((e) => {
      epoch = e ?? "";
    })
    .catch(() => {});

  async function renewAll(): Promise<void> {
    await known;
    const ids = [...held];
    if (ids.length === 0) return;
    // The live set too: after a Redis restart without persistence both come back.
    const keys = [live, epochKey, ...ids.map((id) => `${prefix}:lease:${id}`)];
    const args = [instanceId, leaseMs, epoch, randomBytes(8).toString("hex"), ...ids];
    const [now, ...gone] = (await redis.eval(
      RENEW_SCRIPT,
      keys.length,
      ...keys,
      ...args,
    )) as string[];
    epoch = now ?? "";
    for (let i = 0; i < gone.length; i += 2) {
      held.delete(gone[i]!);
      lost(gone[i]!, gone[i + 1]!);
    }
  }
  const timer = setInterval(() => void renewAll().catch(() => {}), leaseMs / 3);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Leases in Redis: `<prefix>:lease:<session id>` = instance id, with a TTL renewed while the
 * instance lives; `<prefix>:live` is the set of sessions that hold one. `hold` records a lease
 * taken elsewhere (the work queue's) so that it is renewed too.
 */
function redisLeases(
  redis: Redis,
  prefix: string,
  instanceId: string,
  opts: Required<Pick<LeaseOptions, "leaseMs">> & LeaseOptions,
) {
  const { leaseMs, onLost } = opts;
  const held = new Set<string>();
  const lostListeners = new Set<(sessionId: string) => void>();
  const lease = (id: string) => `${prefix}:lease:${id}`;
  const live = `${prefix}:live`;
  const stopRenewing = renewing(redis, prefix, instanceId, leaseMs, held, (id, owner) => {
    onLost?.(id, owner);
    for (const listener of lostListeners) listener(id);
  });

  async function claim(id: string): Promise<boolean> {
    const ok = await redis.eval(CLAIM_SCRIPT, 2, lease(id), live, instanceId, leaseMs, id);
    if (ok !== 1) return false;
    held.add(id);
    return true;
  }

  return {
    claim,
    onLost(listener: (sessionId: string) => void) {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    hold(id: string) {
      held.add(id);
    },
    async release(id: string) {
      held.delete(id);
      await redis.eval(RELEASE_SCRIPT, 2, lease(id), live, instanceId, id).catch(() => {});
    },
    async abandon(id: string) {
      held.delete(id);
      // Not released: an instance that cannot reach Redis now lets the lease run out instead.
      await redis.eval(ABANDON_SCRIPT, 1, lease(id), instanceId).catch(() => {});
    },
    async orphans() {
      const ids = await redis.smembers(live);
      const out: string[] = [];
      for (const id of ids) {
        if (held.has(id)) continue;
        // Taken only if free, in the same step that looks: between a look and a claim this
        // instance's queue may take the session, and it would then be run twice here.
        const args = [lease(id), live, instanceId, leaseMs, id];
        if ((await redis.eval(ADOPT_SCRIPT, 2, ...args)) !== 1) continue;
        held.add(id);
        out.push(id);
      }
      return out;
    },
    dispose: stopRenewing,
  };
}
