import { type Clock, isoNow, systemClock } from "../clock.ts";
import type { Outcome, SessionLogEntry, SessionRecord } from "../model/records.ts";

/** What a held synchronous request gets: the final outcome, the session's end, or a timeout. */
export type OutcomeWait =
  | { kind: "outcome"; outcome: Outcome }
  | { kind: "ended"; session: SessionRecord }
  | { kind: "timeout" };

/** Requests held on one session at once; past it a wait is answered "timeout". */
export const MAX_WAITERS = 10_000;

interface Held {
  final: Outcome | null;
  waiters: Set<(w: OutcomeWait) => void>;
}

/**
 * The held requests of running sessions: a held sync request gets the first final outcome, or
 * the session's end, or a timeout. It hears of ends on the session channel (see channel.ts),
 * which also tells anyone else waiting for a session's end.
 * @example
 * const outcomes = new Outcomes(); outcomes.open("ses_1");
 * const wait = outcomes.wait("ses_1", 30_000); outcomes.offer("ses_1", { status_code: 200, headers: {}, body: null, more: false });
 */
export class Outcomes {
  #clock: Clock;
  #held = new Map<string, Held>();
  /** The event that started each held session of a sync trigger → that session. */
  #byEvent = new Map<string, string>();

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Starts holding waits for a session (of a sync trigger: also found by its event). */
  open(id: string, event?: { eventId: string; isSync: boolean }): void {
    if (!this.#held.has(id)) this.#held.set(id, { final: null, waiters: new Set() });
    if (event?.isSync) this.#byEvent.set(event.eventId, id);
  }

  /**
   * `http_outcome(event_id=…)` from another session: the outcome answers the held request of
   * the session `eventId` started, when that session is held here. Returns the log entries for
   * the session that sent it.
   */
  offerForEvent(eventId: string, outcome: Outcome): SessionLogEntry[] {
    const target = this.#byEvent.get(eventId);
    if (target) return this.offer(target, outcome, true);
    const t = isoNow(this.#clock);
    const text = `http_outcome: no request of event ${eventId} is held on this instance: this outcome changes nothing`;
    return [outcomeEntry(t, outcome), { t, kind: "warning", text }];
  }

  has(id: string): boolean {
    return this.#held.has(id);
  }

  /**
   * An outcome of a session of a sync trigger: the first final one goes to the waiters.
   * Returns the log entries it makes (a second final outcome is noted as changing nothing).
   */
  offer(id: string, outcome: Outcome, isSync: boolean): SessionLogEntry[] {
    const t = isoNow(this.#clock);
    const entry = outcomeEntry(t, outcome);
    if (!isSync) {
      const text = "http_outcome in a session of an asynchronous trigger changes nothing";
      return [entry, { t, kind: "warning", text }];
    }
    if (outcome.more) return [entry];
    const held = this.#held.get(id);
    if (!held || held.final) {
      const text = "the response was already sent: this outcome changes nothing";
      return [entry, { t, kind: "warning", text }];
    }
    held.final = outcome;
    for (const w of [...held.waiters]) w({ kind: "outcome", outcome });
    return [{ ...entry, sent: true }];
  }

  /**
   * Resolves with the first final outcome, the session's end, or a timeout after `timeoutMs`;
   * null when the session is not held here.
   */
  wait(id: string, timeoutMs: number): Promise<OutcomeWait> | null {
    const held = this.#held.get(id);
    if (!held) return null;
    if (held.final) return Promise.resolve({ kind: "outcome", outcome: held.final });
    if (held.waiters.size >= MAX_WAITERS) return Promise.resolve({ kind: "timeout" });
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => settle({ kind: "timeout" }), timeoutMs);
      const settle = (w: OutcomeWait) => {
        this.#clock.clearTimeout(timer);
        held.waiters.delete(settle);
        resolve(w);
      };
      held.waiters.add(settle);
    });
  }

  /** The session has ended (or left this instance): every waiter gets `record`. */
  end(id: string, record: SessionRecord): void {
    const held = this.#held.get(id);
    this.#held.delete(id);
    if (this.#byEvent.get(record.event_id) === id) this.#byEvent.delete(record.event_id);
    for (const w of [...(held?.waiters ?? [])]) w({ kind: "ended", session: record });
  }
}

function outcomeEntry(t: string, outcome: Outcome): Extract<SessionLogEntry, { kind: "outcome" }> {
  return {
    t,
    kind: "outcome",
    status_code: outcome.status_code,
    headers: outcome.headers,
    body: outcome.body ? outcome.body.toString("base64") : null,
    more: outcome.more,
    sent: false,
  };
}
