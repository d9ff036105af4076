import { type Clock, isoNow } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { StoredParts } from "../cluster/pg-coordinator.ts";
import type { Logger } from "../log.ts";
import type { EventRecord, SessionRecord } from "../model/records.ts";
import { parseStored } from "../storage/drivers/batch.ts";
import type { Stores } from "../storage/records.ts";
import { toUnavailable } from "../storage/unavailable.ts";
import type { SessionChannel } from "./channel.ts";
import type { SessionsHere } from "./context.ts";
import type { Lifecycle, StartInput } from "./lifecycle.ts";
import { SessionLog } from "./session-log.ts";
import { NEVER_STARTED, newSessionRecord } from "./session-record.ts";
import { takeoverOf } from "./takeover.ts";
import { endUnreadable, findEntry, isSessionRecord } from "./unreadable.ts";

/** Sessions queued and not yet taken, across all instances; past it accepting one answers 503. */
export const MAX_SHARED_QUEUE = 10_000;
/** How long a read of the queue's length is used while the queue is less than half full. */
const SIZE_FRESH_MS = 250;

/**
 * Asynchronous sessions shared by a fleet on PostgreSQL: the accepting instance writes the
 * record (`created`) and its owner row, queued, in one statement; whichever instance has a free
 * slot takes it (the coordinator's SKIP LOCKED take) and owns it from then on. Alone a session
 * starts where it was accepted, as synchronous ones always do.
 * @example const work = new SharedWork({ cluster, stores, lifecycle, channel, here, log, clock, slots: 32 });
 */
export class SharedWork {
  #cluster: Cluster;
  #stores: Stores;
  #lifecycle: Lifecycle;
  #here: SessionsHere;
  #log: Logger;
  #clock: Clock;
  #slots: number;
  #off: () => void;
  /** The queue's length when last read. */
  #sized = { n: 0, at: 0 };

  constructor(opts: {
    cluster: Cluster;
    stores: Stores;
    lifecycle: Lifecycle;
    /** Where a session's end (a free slot) is heard. */
    channel: SessionChannel;
    here: SessionsHere;
    log: Logger;
    clock: Clock;
    /** Sessions running here at once before this instance stops taking queued ones. */
    slots: number;
  }) {
    this.#cluster = opts.cluster;
    this.#stores = opts.stores;
    this.#lifecycle = opts.lifecycle;
    this.#here = opts.here;
    this.#log = opts.log;
    this.#clock = opts.clock;
    this.#slots = opts.slots;
    // A session that ends frees a slot: read the queue now.
    this.#off = opts.channel.listen((e) => {
      if (e.type !== "started") this.#cluster.owners?.poke();
    });
  }

  /** PostgreSQL's queue, shared by a fleet: absent alone (sessions start where accepted). */
  get #pgQueue() {
    return this.#cluster.shared ? this.#cluster.owners : undefined;
  }

  /**
   * Whether a session of this kind has room now: here (alone, or sync), else on the shared
   * queue (it has a bound). Whether the service still takes sessions is ingest's to ask.
   */
  async canAccept(sync: boolean): Promise<boolean> {
    const owners = this.#pgQueue;
    if (!owners || sync) return this.#here.hasRoom();
    // Far from the bound, a recent count will do: one round trip less per webhook.
    const now = Date.now();
    if (now - this.#sized.at > SIZE_FRESH_MS || this.#sized.n > MAX_SHARED_QUEUE / 2) {
      this.#sized = { n: await owners.queued().catch(rethrowUnavailable), at: now };
    }
    return this.#sized.n < MAX_SHARED_QUEUE;
  }

  /**
   * Starts a synchronous session here; queues an asynchronous one when the queue is shared.
   * `storeEvent`: its event is stored with its first record, in one commit.
   */
  async accept(input: StartInput, storeEvent = false): Promise<SessionRecord> {
    const owners = this.#pgQueue;
    if (!owners || input.trigger.is_sync) return this.#lifecycle.start(input, storeEvent);
    const record = newSessionRecord(input, isoNow(this.#clock));
    const event = storeEvent ? input.event : undefined;
    // One statement: the event, the record, its index entry and its owner row, queued (and
    // announced): any instance with room takes it. Nothing stored if it fails: 503.
    const own = owners.enqueue(record.id);
    await this.#stores.sessions.commit(record.id, { record, was: null, event, own }).catch((e) => {
      throw toUnavailable(e);
    });
    return record;
  }

  /** Starts taking queued sessions (once this instance is ready to run them), until it stops. */
  serve(): void {
    const here = this.#here;
    // Parked sessions (durable, waiting without a process) take no slot: they would otherwise
    // keep an instance full of waiters from taking any queued work.
    const running = () => here.size - this.#lifecycle.parked;
    const free = () => this.#lifecycle.taking && here.hasRoom() && running() < this.#slots;
    // On PostgreSQL, alone too: a session its owner left (it died or stopped) is queued.
    this.#cluster.owners?.serve(free, (taken) => void this.#takeOver(taken));
  }

  /**
   * A session taken off PostgreSQL's queue, now this instance's: queued by its webhook, or left
   * by an owner that died or stopped. What becomes of it is `takeoverOf`'s to say. `stored`:
   * its record, event and log as the take read them (else they are read here).
   */
  async #takeOver(taken: { id: string; stored?: StoredParts | undefined }): Promise<void> {
    const { id, stored } = taken;
    const owners = this.#cluster.owners!;
    try {
      if (this.#here.has(id)) {
        // Still stopping here (fenced a moment ago): let another take (or retake) it later.
        return await owners.requeue(id);
      }
      const rec = stored ? parseStored(stored.record) : await this.#stores.sessions.get(id);
      if (!rec) return await owners.release(id); // no record: nothing to run
      if (!isSessionRecord(rec)) {
        const entry = await findEntry(this.#stores, id);
        if (entry)
          await endUnreadable(
            this.#stores,
            entry,
            "it is not a session record",
            isoNow(this.#clock),
          );
        return await owners.release(id);
      }
      const { event, entries } = await this.#parts(rec, stored);
      // A log that cannot be read: the session goes on with a new one rather than not at all.
      const log = new SessionLog(Array.isArray(entries) ? entries : []);
      const next = takeoverOf(rec, event !== null);
      if (next === "start" && event) return this.#lifecycle.startCreated(rec, event, log);
      if (next === "resume" && event)
        return this.#lifecycle.resume(rec, log, event, "owner stopped; resuming here");
      if (next === "tidy") return await owners.release(id);
      const end = next === "never-started" ? NEVER_STARTED : undefined;
      await this.#lifecycle.interruptAll([{ record: rec, log, ...(end && { end }) }]);
    } catch (err) {
      // Storage unreachable: queued again for whoever can (this one included, later).
      this.#log.error(`queued session ${id} could not be taken up`, err);
      await owners.requeue(id).catch(() => {});
    }
  }

  /** A taken session's event and log: as the take read them, else (or another event) read now. */
  async #parts(rec: SessionRecord, stored: StoredParts | undefined) {
    if (!stored) {
      const [event, entries] = await Promise.all([
        this.#stores.events.get(rec.event_id),
        this.#stores.logs.get(rec.id) as Promise<unknown>,
      ]);
      return { event, entries };
    }
    const read = parseStored(stored.event) as EventRecord | null;
    const event = read?.id === rec.event_id ? read : await this.#stores.events.get(rec.event_id);
    return { event, entries: parseStored(stored.log) };
  }

  dispose(): void {
    this.#off();
  }
}

/** The shared queue's database did not answer: like storage down, the sender is told to retry. */
function rethrowUnavailable(err: unknown): never {
  throw toUnavailable(err);
}
