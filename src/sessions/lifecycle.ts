import { type Clock, isoNow } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { EventRecord, SessionEnd, SessionRecord, SessionState } from "../model/records.ts";
import { parseStoredJson, type StoredJson } from "../storage/stored-json.ts";
import { afterAttempt } from "./after-attempt.ts";
import { BurstWait } from "./burst-wait.ts";
import type { SessionChannel } from "./channel.ts";
import type { SessionContext, SessionsHere } from "./context.ts";
import type { SessionJournal } from "./journal.ts";
import type { Outcomes } from "./outcomes.ts";
import type { Parking } from "./parking.ts";
import type { SessionRunner } from "./run.ts";
import { SessionLog } from "./session-log.ts";
import { type Abandoned, newSessionRecord, type StartInput } from "./session-record.ts";
import { type SessionStates, sessionStates } from "./session-states.ts";
import type { SessionWriter } from "./writer.ts";

/**
 * The event a session starts with, or its stored text, read once the session begins (a burst's
 * waiting sessions keep a string each, not an object tree for the collector to copy).
 */
export type HandedEvent = EventRecord | StoredJson<EventRecord>;

export type { LifecycleEvent } from "./channel.ts";
export { type Abandoned, NEVER_STARTED, type StartInput } from "./session-record.ts";

export interface LifecycleDeps {
  /** The sessions running here, and how many may be: the lifecycle alone adds and removes them. */
  here: SessionsHere;
  /** Where it tells that a session started, ended or left. */
  channel: SessionChannel;
  /** One attempt of a session: its process from start to end (and what a dead one leaves). */
  runner: SessionRunner;
  writer: SessionWriter;
  outcomes: Outcomes;
  parking: Parking;
  clock: Clock;
  log: Logger;
}

/**
 * The lifecycle of the sessions running here: created → running → completed | error | stopped,
 * a crashed durable session resumed from its journal (at most MAX_RESUMES times), a parked one
 * resumed once its wait is on record. Each attempt is the runner's; what comes after it is
 * `afterAttempt`'s decision (after-attempt.ts); each state change is written and told on the
 * session channel by `sessionStates` (session-states.ts).
 * @example const record = lifecycle.start(input); const ended = await lifecycle.stop(record.id);
 */
export class Lifecycle {
  #d: LifecycleDeps;
  #live: SessionsHere;
  #states: SessionStates;
  #closing = false;
  #draining = false;
  /** Async sessions the front handed over, tracked and waiting out its burst to begin. */
  #waits: BurstWait<{ s: SessionContext; event: HandedEvent }> | null;

  constructor(deps: LifecycleDeps) {
    this.#d = deps;
    this.#live = deps.here;
    const { here, channel, writer, parking, clock } = deps;
    const closing = () => this.#closing;
    this.#states = sessionStates({ here, channel, writer, parking, clock, closing });
    const begin = ({ s, event }: { s: SessionContext; event: HandedEvent }) =>
      this.#begin(s, event);
    this.#waits = here.frontBurst ? new BurstWait(here.frontBurst, begin) : null;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Durable sessions parked here: alive, without a process (`/metrics`). */
  get parked(): number {
    return this.#d.parking.size;
  }

  /**
   * Sessions cut short from now on are casualties of the service stopping. Those still waiting
   * out the front's burst never begin: they are left `created`, for the next start.
   */
  shutdown(): void {
    this.#closing = true;
    for (const { s } of this.#waits?.clear() ?? []) {
      this.#states.leave(s, "service stopping before it started");
    }
  }

  /** Whether the service is stopping: no session is admitted or taken from the queue. */
  get closing(): boolean {
    return this.#closing;
  }

  /** Whether this instance takes sessions others left (the queue, recovery): not once draining. */
  get taking(): boolean {
    return !this.#draining && !this.#closing;
  }

  /**
   * The service begins to stop (SIGTERM's drain): it takes no more sessions others left, and
   * the sessions here run on. Resolves once none is left here that could not go on elsewhere:
   * every non-durable session has ended (a durable one is left at the close, to resume).
   */
  drain(): Promise<void> {
    this.#draining = true;
    this.#waits?.flush(); // what waits out a burst runs now, within the drain
    const settled = () => this.#live.count((s) => !s.record.durable) === 0;
    if (settled()) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.#d.channel.listen((e) => {
        if (e.type === "started" || !settled()) return;
        stop();
        resolve();
      });
    });
  }

  /**
   * Creates a session: its record and, with `storeEvent`, the event that starts it, in one
   * commit. Resolves with the record once that commit is in storage; the session then starts
   * in the next turn of the event loop, after whoever asked has answered. Rejects when the
   * commit failed: nothing is stored and nothing runs.
   */
  async start(input: StartInput, storeEvent = false): Promise<SessionRecord> {
    const record = newSessionRecord(input, isoNow(this.#d.clock));
    // A new session's journal is empty (no read), but a re-run's from a step: the steps it reuses.
    const steps = input.rerun?.steps ?? [];
    await this.#d.writer.create(record, storeEvent ? input.event : undefined, steps);
    const journal = this.#d.runner.journal(record, steps);
    const s = this.#track(record, new SessionLog(), journal, "created");
    setImmediate(() => this.#begin(s, input.event));
    return record;
  }

  /**
   * Starts a session whose record was created before (by the instance that queued it, or by
   * one that stopped before starting it: `log` is then the one it left). It is stored
   * `created`: its next write is `running` (with what its log gained meanwhile), not `created`
   * again. A session already here is left to its run. An async one waits out the front door's
   * burst (`burst`), tracked meanwhile: it can be watched and stopped. The event may come as
   * its stored text (the front's hand-over): read once the session begins. `landed`, given: its
   * `created` commit is still on its way; nothing of it is written before it lands.
   */
  startCreated(
    record: SessionRecord,
    event: HandedEvent,
    log = new SessionLog(),
    landed?: Promise<void>,
  ): void {
    // Taken here already: at a start, recovery and the front door's hand-over may both bring a
    // session the front committed while recovery read the index.
    if (this.#live.has(record.id)) return;
    const s = this.#track(record, log, this.#d.runner.journal(record, []), "created", landed);
    if (this.#waits && !record.is_sync && this.taking) this.#waits.add(record.id, { s, event });
    else this.#begin(s, event);
  }

  /** Takes over a durable session nobody runs (after a restart, or its owner died). */
  resume(record: SessionRecord, log: SessionLog, event: EventRecord, note: string): void {
    // Its index entry as stored is not known for sure (a stalled owner's write may land late).
    const s = this.#track(record, log, null, undefined);
    log.append({ t: isoNow(this.#d.clock), kind: "warning", text: note });
    void this.#run(s, event);
  }

  /**
   * Ends a session nobody runs and that cannot resume: `error`, "interrupted". Resolves once
   * that end is stored.
   */
  interrupt(record: SessionRecord, log: SessionLog): Promise<void> {
    return this.interruptAll([{ record, log }]);
  }

  /**
   * Ends sessions nobody runs and that cannot resume (`error`, "interrupted" unless another
   * end is given), without running them here: their records and logs in one commit (the caller
   * bounds how many), then the channel hears each end. Resolves once that commit is done;
   * rejects when it failed (nothing stored: whoever looks after them takes them up again).
   */
  interruptAll(sessions: Abandoned[]): Promise<void> {
    return this.#states.endAll(sessions);
  }

  /**
   * Stops a session running here: its record once its process is gone and its end is stored;
   * null if not here.
   */
  stop(id: string): Promise<SessionRecord> | null {
    const s = this.#live.get(id);
    if (!s) return null;
    s.stopRequested = true;
    const ended = this.#d.channel.ended(id);
    this.#d.parking.wake(id);
    this.#waits?.take(id); // begins, and ends stopped before any process
    return (async () => {
      if (s.run) await s.run.stop();
      return ended;
    })();
  }

  /**
   * Another instance owns the session now (a write of it was fenced, or this instance was
   * declared dead and the session taken over): it stops here with nothing more written. Not started yet, it never starts;
   * running, its process is stopped; ended here already, its end waiting to be written is
   * dropped. The other instance's run is the one on record.
   */
  fence(id: string): void {
    // Its last writes may still wait (it ended as this instance woke): they go too.
    this.#d.writer.discard(id);
    const s = this.#live.get(id);
    if (!s) return;
    s.fenced = s.stopRequested = true;
    this.#d.parking.wake(id);
    this.#waits?.take(id);
    void s.run?.stop();
  }

  /** The session runs here from now: the channel hears it started. */
  #begin(s: SessionContext, event: HandedEvent): void {
    void this.#states.tell(s, "started");
    void this.#run(s, typeof event === "string" ? parseStoredJson(event) : event);
  }

  /**
   * The session is here from now: tracked, its writes behind, its held requests. `stored`: its
   * record's state in storage (null: none yet; undefined: not known for sure).
   */
  #track(
    record: SessionRecord,
    log: SessionLog,
    journal: SessionJournal | null,
    stored: SessionState | null | undefined,
    landed?: Promise<void>,
  ): SessionContext {
    const s: SessionContext = {
      record,
      log,
      journal,
      run: null,
      stopRequested: false,
      fenced: false,
      redact: (text) => text,
      parkable: {
        id: record.id,
        durable: record.durable,
        log,
        canPark: () => s.run !== null && !s.stopRequested && !this.#closing,
        release: () => void s.run?.stop(),
      },
    };
    this.#live.add(s);
    this.#d.writer.open(record, log, stored, landed);
    this.#d.outcomes.open(record.id, { eventId: record.event_id, isSync: record.is_sync });
    return s;
  }

  async #run(s: SessionContext, event: EventRecord): Promise<void> {
    const { record } = s;
    const d = this.#d;
    let end: SessionEnd;
    try {
      end = await d.runner.attempt(s, event, (detail) => this.#states.running(s, detail));
      const woken = d.parking.woken(record.id);
      if (woken && !s.stopRequested && !this.#closing) {
        // Evicted while waiting: sleep without a process until the wait is journaled.
        await woken;
        d.parking.forget(record.id);
        s.run = null;
        if (!s.stopRequested && !this.#closing) return this.#run(s, event);
        end = { state: s.stopRequested ? "stopped" : "crashed", message: "interrupted" };
      }
    } catch (err) {
      d.log.error(`session ${record.id} could not run`, err);
      end = { state: "error", message: err instanceof Error ? err.message : String(err) };
    }
    if (s.fenced) return this.#states.drop(s);
    const facts = { closing: this.#closing, stopRequested: s.stopRequested };
    const after = afterAttempt(end, record, facts);
    if (after.next === "leave") return this.#states.leave(s, after.text);
    if (after.next === "finish") return void this.#states.finish(s, after.end);
    record.attempts++;
    s.log.append({
      t: isoNow(d.clock),
      kind: "warning",
      text: `process died (${after.end.message}); resuming from the journal (attempt ${record.attempts})`,
    });
    s.run = null;
    // A signal or event that came now would go to the dead run's wait and be lost.
    d.runner.abandonWaits(record.id);
    return this.#run(s, event);
  }
}
