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

/** The queue's place in Redis and its two connections (the reader blocks on XREADGROUP). */
interface QueueConn {
  writer: Redis;
  reader: Redis;
  /** The stream. */
  key: string;
  prefix: string;
  instanceId: string;
  leaseMs: number;
}

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
  const consumer = streamConsumer(
    { writer, reader, key, prefix, instanceId, leaseMs },
    opts.leased,
  );
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
    serve: consumer.serve,
    poke: consumer.poke,
    async dispose() {
      if (!(await consumer.stop())) return;
      await writer.quit().catch(() => writer.disconnect());
    },
  };
}

/**
 * The reading side: while `free()`, one entry at a time, reclaimed ones first (at most every
 * third of a lease time), each taken under its lease; errors back off up to 2 s. `stop` is
 * false when it was already stopped.
 */
function streamConsumer(q: QueueConn, leased: (sessionId: string) => void) {
  let stopped = false;
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

  async function serveLoop(free: () => boolean, run: (item: WorkItem) => void) {
    let attempt = 0;
    while (!stopped) {
      if (!free()) {
        await pause(250);
        continue;
      }
      try {
        const due = Date.now() - lastReclaim >= q.leaseMs / 3;
        if (due) lastReclaim = Date.now();
        let entries = due ? await reclaimOne(q) : [];
        if (entries.length === 0) entries = await readOne(q);
        for (const [entryId, fields] of entries) {
          const item = await takeEntry(q, entryId, fields);
          if (!item) continue;
          leased(item.session_id);
          run(item);
        }
        attempt = 0;
      } catch (err) {
        if (stopped) return;
        // The group is gone (Redis restarted without persistence): make it again.
        if (String(err).includes("NOGROUP")) await ensureGroup(q).catch(() => {});
        await pause(Math.min(2000, 100 * 2 ** attempt++));
      }
    }
  }

  return {
    serve(free: () => boolean, run: (item: WorkItem) => void) {
      loop ??= ensureGroup(q)
        .catch(() => {})
        .then(() => serveLoop(free, run));
    },
    poke: () => wake?.(),
    async stop(): Promise<boolean> {
      if (stopped) return false;
      stopped = true;
      wake?.();
      q.reader.disconnect();
      await loop?.catch(() => {});
      return true;
    },
  };
}

async function ensureGroup(q: QueueConn): Promise<void> {
  try {
    await q.writer.xgroup("CREATE", q.key, GROUP, "0", "MKSTREAM");
  } catch (err) {
    if (!String(err).includes("BUSYGROUP")) throw err;
  }
}

/** An entry whose reader died before taking it, idle for a lease time (XAUTOCLAIM). */
async function reclaimOne(q: QueueConn): Promise<[string, string[]][]> {
  const res = (await q.writer.call(
    "XAUTOCLAIM",
    q.key,
    GROUP,
    q.instanceId,
    q.leaseMs,
    "0-0",
    "COUNT",
    1,
  )) as [string, ([string, string[]] | null)[]];
  return (res?.[1] ?? []).filter((e): e is [string, string[]] => e !== null);
}

/** The next new entry for this instance's consumer, waiting up to BLOCK_MS. */
async function readOne(q: QueueConn): Promise<[string, string[]][]> {
  const res = (await q.reader.call(
    "XREADGROUP",
    "GROUP",
    GROUP,
    q.instanceId,
    "COUNT",
    1,
    "BLOCK",
    BLOCK_MS,
    "STREAMS",
    q.key,
    ">",
  )) as [string, [string, string[]][]][] | null;
  return res?.[0]?.[1] ?? [];
}

/**
 * Takes an entry (TAKE): its item when this instance got the session's lease; null when another
 * instance holds it (it runs, or ran, there) or the entry is not an item (dropped).
 */
async function takeEntry(
  q: QueueConn,
  entryId: string,
  fields: string[],
): Promise<WorkItem | null> {
  const { writer, key, prefix } = q;
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
    return null;
  }
  const id = item.session_id;
  const lease = `${prefix}:lease:${id}`;
  const got = await writer.eval(
    TAKE,
    3,
    lease,
    `${prefix}:live`,
    key,
    q.instanceId,
    q.leaseMs,
    id,
    GROUP,
    entryId,
  );
  return got === 1 ? item : null;
}
