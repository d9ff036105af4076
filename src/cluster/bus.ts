import { EventEmitter } from "node:events";
import { Redis } from "ioredis";
import { StreamFanout } from "./streams.ts";

export type BusHandler = (message: unknown) => void;

/**
 * Signals between the instances of one deployment: messages reach every instance's handlers of
 * the channel, this one included. In-process for one instance; Redis for several. Messages are
 * JSON values. `publish`/`subscribe` deliver at most once (pub/sub keeps nothing);
 * `send`/`receive` at least once (a Redis stream per channel), duplicates dropped by `id`.
 */
export interface Bus {
  /** True when other instances may exist (a Redis bus). */
  readonly shared: boolean;
  publish(channel: string, message: unknown): void;
  subscribe(channel: string, handler: BusHandler): () => void;
  /** At least once to every instance; resolves once Redis holds it (retried while unreachable). */
  send(channel: string, message: { id: string; [field: string]: unknown }): Promise<void>;
  receive(channel: string, handler: BusHandler): () => void;
  /** Messages `send` put on `channel` since `sinceMs`, oldest first (bounded; [] alone). */
  since(channel: string, sinceMs: number): Promise<unknown[]>;
  dispose(): Promise<void>;
}

/** One process: an EventEmitter. */
export function localBus(): Bus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    shared: false,
    publish: (channel, message) => emitter.emit(channel, message),
    subscribe(channel, handler) {
      emitter.on(channel, handler);
      return () => emitter.off(channel, handler);
    },
    async send(channel, message) {
      emitter.emit(`send:${channel}`, message);
    },
    receive(channel, handler) {
      emitter.on(`send:${channel}`, handler);
      return () => emitter.off(`send:${channel}`, handler);
    },
    // One process keeps nothing: a session here never outlives the events it missed.
    since: async () => [],
    async dispose() {
      emitter.removeAllListeners();
    },
  };
}

/**
 * Redis pub/sub under `<prefix>:bus:`. One connection publishes, one listens; channels are
 * subscribed on first use and unsubscribed when their last handler goes. `send`/`receive` go
 * through streams (see StreamFanout), read by `instanceId`'s consumer group.
 * @example const bus = redisBus("redis://127.0.0.1:6379", "hookline", "a1b2c3");
 */
export function redisBus(url: string, prefix: string, instanceId: string): Bus {
  const pub = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  const sub = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  const streams = new StreamFanout(url, prefix, instanceId);
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const counts = new Map<string, number>();
  const name = (channel: string) => `${prefix}:bus:${channel}`;
  sub.on("message", (full: string, text: string) => {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return; // not ours
    }
    local.emit(full, message);
  });
  // Errors surface on the calls that need Redis; keep the listeners from crashing the process.
  pub.on("error", () => {});
  sub.on("error", () => {});
  return {
    shared: true,
    publish(channel, message) {
      void pub.publish(name(channel), JSON.stringify(message)).catch(() => {});
    },
    subscribe(channel, handler) {
      const full = name(channel);
      local.on(full, handler);
      const n = (counts.get(full) ?? 0) + 1;
      counts.set(full, n);
      if (n === 1) void sub.subscribe(full).catch(() => {});
      return () => {
        local.off(full, handler);
        const left = (counts.get(full) ?? 1) - 1;
        if (left > 0) counts.set(full, left);
        else {
          counts.delete(full);
          void sub.unsubscribe(full).catch(() => {});
        }
      };
    },
    send: (channel, message) => streams.send(channel, message),
    receive: (channel, handler) => streams.receive(channel, handler),
    since: (channel, sinceMs) => streams.since(channel, sinceMs),
    async dispose() {
      local.removeAllListeners();
      await streams.dispose();
      sub.disconnect();
      await pub.quit().catch(() => pub.disconnect());
    },
  };
}
