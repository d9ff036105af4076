import { HooklineError } from "../errors.ts";
import { newId } from "../ids.ts";
import type { HandlerEvent } from "../model/records.ts";
import type { Filter } from "./filter.ts";

/** Events one subscription holds before the oldest is dropped. */
export const SUBSCRIPTION_BUFFER = 1000;
/** Event ids one subscription remembers to drop duplicates. */
export const SEEN_PER_SUBSCRIPTION = 4 * SUBSCRIPTION_BUFFER;

interface Subscription {
  id: string;
  sessionId: string;
  source: string;
  filter: Filter | null;
  buffer: HandlerEvent[];
  /** Event ids handed to it (bounded): an event that comes twice (bus, replay) counts once. */
  seen: Set<string>;
  /** Set while the session waits in next_event on this subscription. */
  waiter: ((event: HandlerEvent, from: Subscription) => void) | null;
  /** Ends that wait without an event (its run is gone): see `abandonWaits`. */
  abandon: (() => void) | null;
}

/**
 * A wait given up because the run that waited is gone (its process died; the run that replays
 * the session asks again). Not a refusal: no step is recorded for it.
 */
export class RunGone extends Error {
  constructor() {
    super("the run that waited is gone");
    this.name = "RunGone";
  }
}

/**
 * Per-subscription FIFO buffers of webhook events, filled from the moment of subscribing, and the
 * waits of `next_event` on them. In-process; waiting is a callback, never a poll.
 */
export class Subscriptions {
  #byId = new Map<string, Subscription>();
  #bySource = new Map<string, Set<Subscription>>();
  /** Each session's subscription ids, so a session's end does not scan everyone's. */
  #bySession = new Map<string, Set<string>>();
  #onDrop: (sessionId: string, subscriptionId: string) => void;

  constructor(onDrop: (sessionId: string, subscriptionId: string) => void = () => {}) {
    this.#onDrop = onDrop;
  }

  /**
   * `source` is `<project_id>:<trigger name>`. A resumed durable session passes the `id` its
   * journal recorded, so replayed code keeps using the same subscription.
   */
  add(sessionId: string, source: string, filter: Filter | null, id = newId("sub")): string {
    if (this.#byId.has(id)) return id;
    const sub: Subscription = {
      id,
      sessionId,
      source,
      filter,
      buffer: [],
      seen: new Set(),
      waiter: null,
      abandon: null,
    };
    this.#byId.set(sub.id, sub);
    const set = this.#bySource.get(source) ?? new Set();
    this.#bySource.set(source, set);
    set.add(sub);
    const own = this.#bySession.get(sessionId) ?? new Set();
    this.#bySession.set(sessionId, own);
    own.add(id);
    return sub.id;
  }

  /** Whether any subscription here listens to `source` (a publish to none does nothing). */
  listened(source: string): boolean {
    return this.#bySource.has(source);
  }

  /** Hands the event to every subscription of `source` whose filter accepts it. */
  publish(source: string, event: HandlerEvent): void {
    const set = this.#bySource.get(source);
    if (!set) return;
    for (const sub of set) {
      if (!accepts(sub, event)) continue;
      if (sub.waiter) {
        sub.waiter(event, sub);
        continue;
      }
      if (sub.buffer.length >= SUBSCRIPTION_BUFFER) {
        sub.buffer.shift();
        this.#onDrop(sub.sessionId, sub.id);
      }
      sub.buffer.push(event);
    }
  }

  /**
   * The next buffered event of any of `ids` (the oldest first, in the order of `ids`), or the
   * next to arrive; null once `timeoutMs` passes (null waits without end, 0 does not wait).
   * Rejects for ids that are not this session's.
   */
  next(sessionId: string, ids: string[], timeoutMs: number | null): Promise<HandlerEvent | null> {
    const subs = ids.map((id) => {
      const sub = this.#byId.get(id);
      if (!sub || sub.sessionId !== sessionId) {
        throw new HooklineError("bad_request", `unknown subscription "${id}"`);
      }
      return sub;
    });
    for (const sub of subs) {
      const event = sub.buffer.shift();
      if (event) return Promise.resolve(event);
    }
    if (timeoutMs === 0) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        for (const sub of subs) sub.waiter = sub.abandon = null;
      };
      const settle = (event: HandlerEvent | null) => {
        done();
        resolve(event);
      };
      const abandon = () => {
        done();
        reject(new RunGone());
      };
      for (const sub of subs) {
        sub.waiter = (event) => settle(event);
        sub.abandon = abandon;
      }
      if (timeoutMs !== null) timer = setTimeout(() => settle(null), timeoutMs);
    });
  }

  /**
   * Gives up the session's pending `next` (its process died and a new run replays it): the
   * wait takes no event and records nothing; events that come from now on stay buffered for
   * the new run's own `next`.
   */
  abandonWaits(sessionId: string): void {
    for (const id of this.#bySession.get(sessionId) ?? []) this.#byId.get(id)?.abandon?.();
  }

  /**
   * Puts `events` (oldest first) ahead of what the subscription holds: those published while
   * its session had no owner, replayed when another instance takes it over. Filtered, and
   * those already handed to it skipped.
   */
  backfill(id: string, events: HandlerEvent[]): number {
    const sub = this.#byId.get(id);
    if (!sub) return 0;
    const missed = events.filter((e) => accepts(sub, e));
    sub.buffer.unshift(...missed.slice(-SUBSCRIPTION_BUFFER));
    while (sub.buffer.length > SUBSCRIPTION_BUFFER) {
      sub.buffer.pop();
      this.#onDrop(sub.sessionId, sub.id);
    }
    return missed.length;
  }

  remove(id: string): boolean {
    const sub = this.#byId.get(id);
    if (!sub) return false;
    this.#byId.delete(id);
    const set = this.#bySource.get(sub.source);
    set?.delete(sub);
    if (set?.size === 0) this.#bySource.delete(sub.source);
    const own = this.#bySession.get(sub.sessionId);
    own?.delete(id);
    if (own?.size === 0) this.#bySession.delete(sub.sessionId);
    return true;
  }

  /** Ends every subscription of a session (it ended); a pending wait is left to its timer. */
  removeSession(sessionId: string): void {
    for (const id of [...(this.#bySession.get(sessionId) ?? [])]) this.remove(id);
  }

  has(id: string, sessionId: string): boolean {
    return this.#byId.get(id)?.sessionId === sessionId;
  }
}

/** Whether the subscription takes the event: its filter passes and it has not had it yet. */
function accepts(sub: Subscription, event: HandlerEvent): boolean {
  if (sub.filter && !sub.filter.matches({ data: event.data, event_type: event.event_type })) {
    return false;
  }
  if (sub.seen.has(event.event_id)) return false;
  sub.seen.add(event.event_id);
  if (sub.seen.size > SEEN_PER_SUBSCRIPTION) sub.seen.delete(sub.seen.values().next().value!);
  return true;
}
