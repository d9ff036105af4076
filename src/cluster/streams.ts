import { Redis } from "ioredis";

/** Entries a channel's stream keeps (approximately: `MAXLEN ~`); older ones are trimmed. */
export const STREAM_MAXLEN = 10_000;
/** Message ids remembered per instance to drop the duplicates at-least-once delivery brings. */
export const SEEN_IDS = 20_000;
/** Sends retried at once (Redis unreachable); past it a send fails at once. */
export const MAX_RETRYING_SENDS = 10_000;
/** How long a send keeps retrying while Redis is unreachable. */
export const SEND_RETRY_MS = 30_000;
/** How long an instance's consumer groups outlive its last sign of life. */
const ALIVE_MS = 30_000;
const BLOCK_MS = 1000;
const READ_COUNT = 200;

type Handler = (message: unknown) => void;

/**
 * At-least-once fan-out between instances over Redis Streams: a stream per channel
 * (`<prefix>:stream:<channel>`, XADD with `MAXLEN ~`), each instance its own consumer group
 * (named by its instance id) read with XREADGROUP BLOCK and acknowledged after its handlers ran.
 * After a reconnect the group's pending entries are read again, and entries added while the
 * connection was down are still there; duplicates are dropped by message id (a bounded set).
 * Groups of instances that stopped renewing `<prefix>:alive:<id>` are destroyed.
 * @example const s = new StreamFanout(url, "hookline", "a1b2"); s.receive("events", console.log);
 */
export class StreamFanout {
  #prefix: string;
  #group: string;
  #writer: Redis;
  #reader: Redis;
  #handlers = new Map<string, Set<Handler>>();
  /** Channels whose group exists: the loop reads only those. */
  #ready = new Set<string>();
  #seen = new Map<string, true>();
  #retrying = 0;
  #pending = true;
  #disposed = false;
  #timers: NodeJS.Timeout[] = [];
  #loop: Promise<void> | null = null;

  constructor(url: string, prefix: string, instanceId: string) {
    this.#prefix = prefix;
    this.#group = instanceId;
    this.#writer = new Redis(url, { maxRetriesPerRequest: 2 });
    // The reader's commands wait out a reconnect instead of failing.
    this.#reader = new Redis(url, { maxRetriesPerRequest: null });
    this.#writer.on("error", () => {});
    this.#reader.on("error", () => {});
    // Entries delivered but not acknowledged before the connection dropped: read them again.
    this.#reader.on("ready", () => {
      this.#pending = true;
    });
    const alive = () =>
      void this.#writer.set(this.#aliveKey(instanceId), "1", "PX", ALIVE_MS).catch(() => {});
    alive();
    this.#timers.push(
      setInterval(alive, ALIVE_MS / 3),
      setInterval(() => this.#sweep(), ALIVE_MS),
    );
    for (const t of this.#timers) t.unref();
  }

  #key(channel: string): string {
    return `${this.#prefix}:stream:${channel}`;
  }

  #aliveKey(id: string): string {
    return `${this.#prefix}:alive:${id}`;
  }

  /**
   * Appends a message; retried (bounded) while Redis is unreachable. `id` names it for
   * duplicate detection.
   */
  async send(channel: string, message: { id: string; [field: string]: unknown }): Promise<void> {
    const text = JSON.stringify(message);
    const add = () =>
      this.#writer.xadd(this.#key(channel), "MAXLEN", "~", STREAM_MAXLEN, "*", "m", text);
    try {
      await add();
      return;
    } catch (err) {
      if (this.#retrying >= MAX_RETRYING_SENDS || this.#disposed) throw err;
    }
    this.#retrying++;
    try {
      const until = Date.now() + SEND_RETRY_MS;
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        try {
          await add();
          return;
        } catch (err) {
          if (Date.now() > until || this.#disposed) throw err;
        }
      }
    } finally {
      this.#retrying--;
    }
  }

  /** Calls `handler` with every message sent on `channel` from now on, from any instance. */
  receive(channel: string, handler: Handler): () => void {
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
      void this.#createGroup(channel);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Messages sent on `channel` since `sinceMs` (epoch ms), oldest first, at most `limit`. */
  async since(channel: string, sinceMs: number, limit = STREAM_MAXLEN): Promise<unknown[]> {
    const rows = await this.#writer.xrange(
      this.#key(channel),
      `${Math.max(0, Math.floor(sinceMs))}-0`,
      "+",
      "COUNT",
      limit,
    );
    return rows.flatMap(([, fields]) => parse(fields));
  }

  async #createGroup(channel: string): Promise<void> {
    for (let attempt = 0; !this.#disposed; attempt++) {
      try {
        await this.#writer.xgroup("CREATE", this.#key(channel), this.#group, "$", "MKSTREAM");
      } catch (err) {
        if (!String(err).includes("BUSYGROUP")) {
          await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
          continue;
        }
      }
      this.#ready.add(channel);
      this.#loop ??= this.#read();
      return;
    }
  }

  async #read(): Promise<void> {
    while (!this.#disposed) {
      const channels = [...this.#ready];
      const pending = this.#pending;
      try {
        const args: (string | number)[] = ["GROUP", this.#group, "c", "COUNT", READ_COUNT];
        // Pending entries come back at once; new ones are waited for.
        if (!pending) args.push("BLOCK", BLOCK_MS);
        args.push("STREAMS", ...channels.map((c) => this.#key(c)));
        args.push(...channels.map(() => (pending ? "0" : ">")));
        const res = (await this.#reader.call("XREADGROUP", ...args)) as
          | [string, [string, string[]][]][]
          | null;
        let any = false;
        for (const [key, entries] of res ?? []) {
          if (entries.length === 0) continue;
          any = true;
          this.#deliver(key, entries);
        }
        if (pending && !any) this.#pending = false;
      } catch (err) {
        if (this.#disposed) return;
        // The stream or group is gone (Redis restarted without persistence): make them again.
        if (String(err).includes("NOGROUP")) {
          for (const c of channels) this.#ready.delete(c);
          for (const c of channels) void this.#createGroup(c);
        }
        this.#pending = true;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  #deliver(key: string, entries: [string, string[]][]): void {
    const channel = key.slice(`${this.#prefix}:stream:`.length);
    const handlers = this.#handlers.get(channel);
    for (const [entryId, fields] of entries) {
      for (const message of parse(fields)) {
        const id = (message as { id?: unknown }).id;
        const seenKey = `${channel}:${typeof id === "string" ? id : entryId}`;
        if (this.#seen.has(seenKey)) continue;
        this.#seen.set(seenKey, true);
        if (this.#seen.size > SEEN_IDS) this.#seen.delete(this.#seen.keys().next().value!);
        for (const h of handlers ?? []) {
          try {
            h(message);
          } catch {
            // One handler's failure must not hold back the acknowledgement of the others.
          }
        }
      }
    }
    const ids = entries.map(([id]) => id);
    void this.#writer.xack(key, this.#group, ...ids).catch(() => {});
  }

  /** Destroys the consumer groups of instances gone for good, so their entries are not kept. */
  async #sweep(): Promise<void> {
    try {
      for (const channel of this.#ready) {
        const groups = (await this.#writer.xinfo("GROUPS", this.#key(channel))) as unknown[][];
        for (const g of groups) {
          const name = String(g[g.indexOf("name") + 1]);
          if (name === this.#group) continue;
          if ((await this.#writer.exists(this.#aliveKey(name))) === 0) {
            await this.#writer.xgroup("DESTROY", this.#key(channel), name);
          }
        }
      }
    } catch {
      // Next sweep.
    }
  }

  /** Stops reading; destroys this instance's groups. Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const t of this.#timers) clearInterval(t);
    this.#reader.disconnect();
    const batch = this.#writer.pipeline();
    for (const c of this.#ready) batch.xgroup("DESTROY", this.#key(c), this.#group);
    batch.del(this.#aliveKey(this.#group));
    await batch.exec().catch(() => {});
    await this.#writer.quit().catch(() => this.#writer.disconnect());
  }
}

function parse(fields: string[]): unknown[] {
  const at = fields.indexOf("m");
  if (at < 0) return [];
  try {
    return [JSON.parse(fields[at + 1]!)];
  } catch {
    return []; // not ours
  }
}
