import { randomUUID } from "node:crypto";
import type { Cluster } from "../cluster/cluster.ts";
import { HooklineError } from "../errors.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { HandlerEvent, SessionRecord } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";
import type { SessionChannel } from "./channel.ts";
import { type EventMessage, eventMessage, eventOf } from "./event-wire.ts";
import type { Lifecycle } from "./lifecycle.ts";

/** How long a stop asked of another instance is waited for before answering with the record. */
export const REMOTE_STOP_MS = 10_000;
/** How often a wait for another instance's session to end reads its record again. */
export const ENDED_RECHECK_MS = 5000;
/** Waits on sessions of other instances held at once; past it a wait reads storage at once. */
export const MAX_REMOTE_WAITS = 10_000;

/**
 * This instance's part in the cluster for sessions: leases held while a session runs here,
 * webhook events handed to every instance's subscriptions, stop requests sent to a session's
 * owner, and the news that a session ended. Alone (no cluster) only the local parts act.
 * @example const link = new ClusterLink(cluster, stores, channel, lifecycle, subscriptions);
 */
export class ClusterLink {
  #cluster: Cluster;
  #stores: Stores;
  #subscriptions: Subscriptions;
  #remoteEnds = new Map<string, (() => void)[]>();
  #waits = 0;
  /** Events received behind one read from storage; null when none is. */
  #inOrder: Promise<void> | null = null;
  #off: (() => void)[] = [];

  constructor(
    cluster: Cluster,
    stores: Stores,
    channel: SessionChannel,
    lifecycle: Pick<Lifecycle, "stop" | "fence">,
    subscriptions: Subscriptions,
  ) {
    this.#cluster = cluster;
    this.#stores = stores;
    this.#subscriptions = subscriptions;
    this.#off.push(channel.listen((e) => this.#onLifecycle(e.type, e.record, e.written)));
    // Taken over while this instance stalled: the adopter's run is the one; this one stops.
    const unlisten = cluster.onLost?.((id) => lifecycle.fence(id));
    if (unlisten) this.#off.push(unlisten);
    if (!cluster.shared) return;
    const { bus, instanceId } = cluster;
    // Events reach the subscribers on every instance; stop requests reach the session's owner.
    // All three at least once (streams): a lost event leaves a waiter asleep, a lost end leaves
    // a watcher waiting; duplicates are dropped by id.
    this.#off.push(
      bus.receive("events", (m) => {
        const { origin, source, event } = m as EventMessage;
        if (origin === instanceId) return;
        // In order: one that comes by id (large) holds back the ones after it.
        if (event && this.#inOrder === null) return subscriptions.publish(source, event);
        const after = (this.#inOrder ?? Promise.resolve()).then(async () => {
          const loaded = await eventOf(m, stores);
          if (loaded) subscriptions.publish(source, loaded);
        });
        this.#inOrder = after;
        void after.then(() => {
          if (this.#inOrder === after) this.#inOrder = null;
        });
      }),
      bus.receive("stop", (m) => {
        void lifecycle.stop((m as { session_id: string }).session_id);
      }),
      bus.receive("ended", (m) => {
        const { session_id } = m as { session_id: string };
        for (const resolve of this.#remoteEnds.get(session_id) ?? []) resolve();
        this.#remoteEnds.delete(session_id);
      }),
    );
  }

  /** Hands a webhook event to the subscriptions of `source`, here and on every instance. */
  publishEvent(source: string, event: HandlerEvent): void {
    this.#subscriptions.publish(source, event);
    if (this.#cluster.shared) {
      const { bus, instanceId } = this.#cluster;
      void bus.send("events", eventMessage(instanceId, source, event)).catch(() => {});
    }
  }

  /**
   * The stored record once a session not running here has ended: told over the bus when
   * another instance runs it, else as stored.
   */
  async whenEnded(id: string): Promise<SessionRecord | null> {
    let stored = await this.#stores.sessions.get(id);
    // Storage is read again every ENDED_RECHECK_MS: an end told between a read and the wait
    // (or lost with a Redis restart) is found there.
    while (stored && this.#cluster.shared && isRunning(stored)) {
      if (this.#waits >= MAX_REMOTE_WAITS) break;
      await this.#waitRemoteEnd(id, null);
      stored = await this.#stores.sessions.get(id);
    }
    return stored;
  }

  /** Stops a session not running here: asks its owner, waits (bounded) for its end. */
  async stopElsewhere(id: string): Promise<SessionRecord> {
    const record = await this.#stores.sessions.get(id);
    if (!record) throw new HooklineError("not_found", `session "${id}" not found`);
    if (!this.#cluster.shared || !isRunning(record)) return record;
    if (record.state === "created" || this.#cluster.owners) {
      const stopped = await this.#stopQueued(record);
      if (stopped) return stopped;
    }
    const ask = { id: `${id}:${randomUUID()}`, session_id: id };
    await this.#waitRemoteEnd(id, () => void this.#cluster.bus.send("stop", ask).catch(() => {}));
    return (await this.#stores.sessions.get(id)) ?? record;
  }

  /**
   * A session still on the shared queue: nobody runs it, so it is stopped here. Its lease
   * keeps a taker off meanwhile; a taker that comes later finds it ended. Null when it is not
   * queued after all (another instance holds it).
   */
  async #stopQueued(record: SessionRecord): Promise<SessionRecord | null> {
    const cluster = this.#cluster;
    if (!(await cluster.claim(record.id).catch(() => false))) return null;
    try {
      const now = await this.#stores.sessions.get(record.id);
      // On PostgreSQL a queued session may also be one left `running` (its owner died): it
      // runs nowhere either, so it is stopped as it is.
      const queued = now?.state === "created" || (cluster.owners && now?.state === "running");
      if (!now || !queued) return null;
      const t = new Date().toISOString();
      const stopped: SessionRecord = { ...now, state: "stopped", ended_at: t, updated_at: t };
      const own = cluster.owners?.write(record.id, true);
      await this.#stores.sessions.commit(record.id, { record: stopped, was: now.state, own });
      cluster.owners?.forget(record.id);
      await cluster.bus.send("ended", { id: record.id, session_id: record.id }).catch(() => {});
      return stopped;
    } finally {
      await cluster.release(record.id).catch(() => {});
    }
  }

  dispose(): void {
    for (const off of this.#off.splice(0)) off();
  }

  #waitRemoteEnd(id: string, ask: (() => void) | null): Promise<void> {
    if (this.#waits >= MAX_REMOTE_WAITS) return Promise.resolve();
    this.#waits++;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ask ? REMOTE_STOP_MS : ENDED_RECHECK_MS);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      const list = this.#remoteEnds.get(id) ?? [];
      list.push(done);
      this.#remoteEnds.set(id, list);
      ask?.();
    }).finally(() => this.#waits--);
  }

  #onLifecycle(type: "started" | "ended" | "left", record: SessionRecord, written: Promise<void>) {
    if (!this.#cluster.shared) return;
    const cluster = this.#cluster;
    // A session that starts here holds its lease already: taken before its record was first
    // written (writer), with the queue's entry, or by the sweep that adopted it.
    if (type === "started") return;
    if (type === "left") {
      // Left as stored for another instance to take up: its lease goes now (the next sweep
      // finds it) rather than when the lease runs out. Not released: a released session is
      // no longer looked for, and would wait for this instance's next start.
      void written.then(() => cluster.abandon(record.id)).catch(() => {});
    } else {
      // Other instances read the record from storage: release once it is written. An end
      // storage refused gives the lease back, the session still looked after: a sweep ends it.
      written.then(
        async () => {
          await cluster.release(record.id).catch(() => {});
          await cluster.bus.send("ended", { id: record.id, session_id: record.id }).catch(() => {});
        },
        () => cluster.abandon(record.id).catch(() => {}),
      );
    }
  }
}

function isRunning(record: SessionRecord): boolean {
  return record.state === "running" || record.state === "created";
}
