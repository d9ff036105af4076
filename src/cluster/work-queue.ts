import { Redis } from "ioredis";

/** Sessions queued and not yet taken, across all instances; past it accepting one answers 503. */
export const MAX_SHARED_QUEUE = 10_000;
const GROUP = "workers";
const BLOCK_MS = 1000;

/** What the shared queue carries: a session created by the instance that accepted its webhook. */
export interface WorkItem {
  session_id: string;
  /** The session record as created (state `created`), JSON. */
  record: unknown;
}

/**
 * Work shared by all instances: a Redis stream (`<prefix>:stream:work`) read by one consumer
 * group of every instance. An instance reads only while it has a free slot. Taking an entry is
 * one Lua step that takes the session's lease (SET NX), adds it to the live set, acknowledges
 * and deletes the entry: a session is either still queued or leased by exactly one instance.
 * Entries read by an instance that died before that step are reclaimed (XAUTOCLAIM) once idle
 * for the lease time.
 * @example queue.serve(() => free > 0, (item) => run(item)); await queue.push(item);
 */
export interface WorkQueue {
  /**
   * Before the session's record is written: the session is about to be queued. An instance
   * that dies between its record and its `push` leaves this mark, which `lapsed` hands out
   * once a lease time has passed (the shared queue's `<prefix>:accepting`, a sorted set by
   * deadline, as long as the writes in flight).
   */
  intend(sessionId: string): Promise<void>;
  /** Queues the session and clears its mark, in one step. */
  push(item: WorkItem): Promise<void>;
  /**
   * Sessions marked by `intend` and never pushed, their lease time over (at most 100 a call);
   * each one returned is cleared, so exactly one caller gets it.
   */
  lapsed(): Promise<string[]>;
  /** Entries waiting (not yet taken). */
  size(): Promise<number>;
  /** Starts taking entries while `free()`; `run` gets each one whose lease is now ours. */
  serve(free: () => boolean, run: (item: WorkItem) => void): void;
  /** A slot came free: read now rather than at the next poll. */
  poke(): void;
  dispose(): Promise<void>;
}

const TAKE = `
local ok = redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
if ok then redis.call('sadd', KEYS[2], ARGV[3]) end
redis.call('xack', KEYS[3], ARGV[4], ARGV[5])
redis.call('xdel', KEYS[3], ARGV[5])
if ok then return 1 else return 0 end`;

/**
 * The shared queue on Redis; `leased(id)` is told of every session whose lease a take got,
 * so the cluster renews it.
 * @example const q = redisWorkQueue({ url, prefix, instanceId, leaseMs, leased: (id) => held.add(id) });
 */
export function redisWorkQueue(opts: {
  url: string;
  prefix: string;
  instanceId: string;
  leaseMs: number;
  leased: (sessionId: string) => void;
}): WorkQueue {
  const { prefix, instanceId, leaseMs } = opts;
  const key = `${prefix}:stream:work`;
  const accepting = `${prefix}:accepting`;
  const writer = new Redis(opts.url, { maxRetriesPerRequest: 2 });
  const reader = new Redis(opts.url, { maxRetriesPerRequest: null });
  writer.on("error", () => {});
  reader.on("error", () => {});
  let disposed = false;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  let lastReclaim = 0;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  async function ensureGroup(): Promise<void> {
    try {
      await writer.xgroup("CREATE", key, GROUP, "0", "MKSTREAM");
    } catch (err) {
      if (!String(err).includes("BUSYGROUP")) throw err;
    }
  }

  /** Entries whose reader died before taking them, idle for a lease time. */
  async function reclaim(): Promise<[string, string[]][]> {
    if (Date.now() - lastReclaim < leaseMs / 3) return [];
    lastReclaim = Date.now();
    const res = (await writer.call(
      "XAUTOCLAIM",
      key,
      GROUP,
      instanceId,
      leaseMs,
      "0-0",
      "COUNT",
      1,
    )) as [string, ([string, string[]] | null)[]];
    return (res?.[1] ?? []).filter((e): e is [string, string[]] => e !== null);
  }

  async function take(entryId: string, fields: string[], run: (item: WorkItem) => void) {
    const at = fields.indexOf("m");
    let item: WorkItem | null = null;
    try {
      item = JSON.parse(fields[at + 1] ?? "") as WorkItem;
    } catch {
      item = null;
    }
    if (!item || typeof item.session_id !== "string") {
      await writer.xack(key, GROUP, entryId);
      await writer.xdel(key, entryId);
      return;
    }
    const id = item.session_id;
    const live = `${prefix}:live`;
    const got = await writer.eval(
      TAKE,
      3,
      `${prefix}:lease:${id}`,
      live,
      key,
      instanceId,
      leaseMs,
      id,
      GROUP,
      entryId,
    );
    // Not ours: another instance holds its lease, so it runs (or ran) there.
    if (got !== 1) return;
    opts.leased(id);
    run(item);
  }

  async function serveLoop(free: () => boolean, run: (item: WorkItem) => void) {
    let attempt = 0;
    while (!disposed) {
      if (!free()) {
        await pause(250);
        continue;
      }
      try {
        let entries = await reclaim();
        if (entries.length === 0) {
          const res = (await reader.call(
            "XREADGROUP",
            "GROUP",
            GROUP,
            instanceId,
            "COUNT",
            1,
            "BLOCK",
            BLOCK_MS,
            "STREAMS",
            key,
            ">",
          )) as [string, [string, string[]][]][] | null;
          entries = res?.[0]?.[1] ?? [];
        }
        for (const [entryId, fields] of entries) await take(entryId, fields, run);
        attempt = 0;
      } catch (err) {
        if (disposed) return;
        // The group is gone (Redis restarted without persistence): make it again.
        if (String(err).includes("NOGROUP")) await ensureGroup().catch(() => {});
        await pause(Math.min(2000, 100 * 2 ** attempt++));
      }
    }
  }

  return {
    async intend(sessionId) {
      await writer.zadd(accepting, Date.now() + leaseMs, sessionId);
    },
    async push(item) {
      await writer
        .multi()
        .xadd(key, "*", "m", JSON.stringify(item))
        .zrem(accepting, item.session_id)
        .exec();
    },
    async lapsed() {
      const ids = await writer.zrangebyscore(accepting, "-inf", Date.now(), "LIMIT", 0, 100);
      const mine: string[] = [];
      for (const id of ids) if ((await writer.zrem(accepting, id)) === 1) mine.push(id);
      return mine;
    },
    size: () => writer.xlen(key),
    serve(free, run) {
      loop ??= ensureGroup()
        .catch(() => {})
        .then(() => serveLoop(free, run));
    },
    poke: () => wake?.(),
    async dispose() {
      if (disposed) return;
      disposed = true;
      wake?.();
      reader.disconnect();
      await loop?.catch(() => {});
      await writer.quit().catch(() => writer.disconnect());
    },
  };
}
