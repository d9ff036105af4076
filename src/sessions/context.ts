import type { SessionRecord } from "../model/records.ts";
import type { SessionRun } from "../runtime/runtime.ts";
import type { FrontBurst } from "./burst-wait.ts";
import type { SessionJournal } from "./journal.ts";
import type { Parkable } from "./parking.ts";
import type { SessionLog } from "./session-log.ts";

/**
 * One session this instance runs (or holds parked): what its pieces share, instead of each
 * piece holding the others. Made by the lifecycle, which alone changes it.
 */
export interface SessionContext {
  record: SessionRecord;
  log: SessionLog;
  /** Null until read from storage (a session adopted after a restart). */
  journal: SessionJournal | null;
  run: SessionRun | null;
  stopRequested: boolean;
  /** Taken over by another instance (this one was fenced or declared dead): nothing more is written. */
  fenced: boolean;
  redact: (text: string) => string;
  parkable: Parkable;
}

/**
 * The count the front door's thread admits sessions by (src/front/gate.ts): told how many are
 * here at each change, it says how many it committed that are on their way here.
 */
export interface FrontCounters {
  setHere(n: number): void;
  readonly arriving: number;
  /** Whether the front is taking requests now (async sessions it hands over wait it out). */
  readonly busy: boolean;
  /** Whether it has worked on two requests at once since the last call (clears it). */
  crowded(): boolean;
}

/**
 * The sessions running here (or parked), by id, at most `maxActive` of them with those the
 * front door committed on their way here: added and removed by the lifecycle alone, read by
 * the rest.
 * @example const here = new SessionsHere(100); here.hasRoom(); liveView(here, "ses_1");
 */
export class SessionsHere {
  readonly maxActive: number;
  #live = new Map<string, SessionContext>();
  readonly #front: FrontCounters | undefined;
  /**
   * With a front door and `burstYieldMs`: whether it is taking requests, which the async
   * sessions it hands over wait out before they begin, that long at most (`SVC_BURST_YIELD`).
   */
  readonly frontBurst: FrontBurst | undefined;

  constructor(maxActive: number, front?: FrontCounters, burstYieldMs = 0) {
    this.maxActive = maxActive;
    this.#front = front;
    this.frontBurst =
      front && burstYieldMs > 0
        ? { busy: () => front.busy, crowded: () => front.crowded(), maxMs: burstYieldMs }
        : undefined;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Whether one more session may be alive here (running or waiting for a slot). */
  hasRoom(): boolean {
    return this.#live.size + (this.#front?.arriving ?? 0) < this.maxActive;
  }

  get(id: string): SessionContext | undefined {
    return this.#live.get(id);
  }

  has(id: string): boolean {
    return this.#live.has(id);
  }

  add(s: SessionContext): void {
    this.#live.set(s.record.id, s);
    this.#front?.setHere(this.#live.size);
  }

  delete(id: string): void {
    this.#live.delete(id);
    this.#front?.setHere(this.#live.size);
  }

  /** How many of the sessions here `which` holds for. */
  count(which: (s: SessionContext) => boolean): number {
    let n = 0;
    for (const s of this.#live.values()) if (which(s)) n++;
    return n;
  }
}

/** A running session's record and log, as the pieces outside the lifecycle see it. */
export function liveView(here: SessionsHere, id: string) {
  const s = here.get(id);
  return s ? { record: s.record, log: s.log } : null;
}
