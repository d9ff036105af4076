import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

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
 * `fresh` says whether the leases are known good now (see Cluster.fresh).
 */
function renewing(
  redis: Redis,
  prefix: string,
  instanceId: string,
  leaseMs: number,
  held: Set<string>,
  lost: (sessionId: string, owner: string) => void,
): { stop: () => void; fresh: () => Promise<void> | null } {
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

  // When the last renewal that Redis answered was sent: the leases held then are good until a
  // lease time after it. Writes wait (`fresh`) while that is more than half a lease time ago.
  let confirmed = Date.now();
  /** Writes waiting for fresh leases, each with when it began to wait. */
  let waiting: { since: number; go: () => void }[] = [];
  let asked: Promise<void> | null = null;

  async function renewAll(): Promise<void> {
    await known;
    const sent = Date.now();
    const ids = [...held];
    if (ids.length > 0) {
      // The live set too: after a Redis restart without persistence both come back.
      const keys = [live, epochKey, ...ids.map((id) => `${prefix}:lease:${id}`)];
      const args = [instanceId, leaseMs, epoch, randomBytes(8).toString("hex"), ...ids];
      const out = (await redis.eval(RENEW_SCRIPT, keys.length, ...keys, ...args)) as string[];
      const [now, ...gone] = out;
      epoch = now ?? "";
      // Told once: another renewal under way may find the same ones.
      for (let i = 0; i < gone.length; i += 2)
        if (held.delete(gone[i]!)) lost(gone[i]!, gone[i + 1]!);
    }
    confirmed = sent;
  }
  /**
   * One renewal now; then whoever waited for fresh leases since before it was sent goes on
   * (Redis down: all the same).
   */
  const renewNow = () => {
    const sent = Date.now();
    return renewAll()
      .catch(() => {})
      .finally(() => {
        const due = waiting.filter((w) => w.since <= sent);
        waiting = waiting.filter((w) => w.since > sent);
        for (const w of due) w.go();
      });
  };
  const timer = setInterval(() => void renewNow(), leaseMs / 3);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    fresh(): Promise<void> | null {
      if (Date.now() - confirmed < leaseMs / 2) return null;
      const since = Date.now();
      const wait = new Promise<void>((go) => waiting.push({ since, go }));
      // One renewal asked at a time; a write that comes while it is under way waits for the
      // next one (the timer's, within a third of a lease time) unless that one answers it.
      if (!asked) {
        asked = renewNow().finally(() => {
          asked = null;
        });
      }
      return wait;
    },
  };
}

/**
 * Leases in Redis: `<prefix>:lease:<session id>` = instance id, with a TTL renewed while the
 * instance lives; `<prefix>:live` is the set of sessions that hold one. `hold` records a lease
 * taken elsewhere (the work queue's) so that it is renewed too.
 */
export function redisLeases(
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
  const renewal = renewing(redis, prefix, instanceId, leaseMs, held, (id, owner) => {
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
    fresh: renewal.fresh,
    dispose: renewal.stop,
  };
}
