import { randomUUID } from "node:crypto";
import type { Cluster, Owners } from "../cluster/cluster.ts";
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
 * This instance's part in the cluster for sessions: webhook events handed to every instance's
 * subscriptions, stop requests sent to a session's owner, a queued session stopped where it
 * waits, the news that a session ended, and a session left here queued again for the others.
 * Alone (no cluster) only the local parts act.
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

  /** Whether an event of `source` reaches anyone: a subscription here, or other instances. */
  listened(source: string): boolean {
    return this.#cluster.shared || this.#subscriptions.listened(source);
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
    const owners = this.#cluster.owners;
    if (owners) {
      const stopped = await this.#stopQueued(owners, record);
      if (stopped) return stopped;
    }
    const ask = { id: `${id}:${randomUUID()}`, session_id: id };
    await this.#waitRemoteEnd(id, () => void this.#cluster.bus.send("stop", ask).catch(() => {}));
    return (await this.#stores.sessions.get(id)) ?? record;
  }

  /**
   * A session on PostgreSQL's queue (never started, or left by an owner that died): nobody runs
   * it, so it is taken off the queue and stopped here, in a fenced write that removes its owner
   * row. Null when it is not queued (another instance owns it).
   */
  async #stopQueued(owners: Owners, record: SessionRecord): Promise<SessionRecord | null> {
    if (!(await owners.takeQueued(record.id).catch(() => false))) return null;
    try {
      const now = await this.#stores.sessions.get(record.id);
      if (!now || !isRunning(now)) return null;
      const t = new Date().toISOString();
      const stopped: SessionRecord = { ...now, state: "stopped", ended_at: t, updated_at: t };
      const own = owners.write(record.id, true);
      await this.#stores.sessions.commit(record.id, { record: stopped, was: now.state, own });
      owners.forget(record.id);
      const { bus } = this.#cluster;
      await bus.send("ended", { id: record.id, session_id: record.id }).catch(() => {});
      return stopped;
    } finally {
      // Not stopped after all (no record, ended, storage refused): its owner row goes back.
      await owners.requeue(record.id).catch(() => {});
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
    const { owners, bus } = this.#cluster;
    // A session that starts here is owned already: from its first write, or taken off the queue.
    if (!this.#cluster.shared || !owners || type === "started") return;
    const requeue = () => owners.requeue(record.id).catch(() => {});
    // Left as stored (this instance is stopping): queued again now for the others to take up,
    // rather than when this instance's heartbeat runs out.
    if (type === "left") return void written.then(requeue, requeue);
    // Other instances read the record from storage: they are told once it is written. An end
    // storage refused is queued again: its next owner ends it.
    written.then(async () => {
      await owners.release(record.id).catch(() => {});
      await bus.send("ended", { id: record.id, session_id: record.id }).catch(() => {});
    }, requeue);
  }
}

function isRunning(record: SessionRecord): boolean {
  return record.state === "running" || record.state === "created";
}
