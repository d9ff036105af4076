import { compileFilter } from "../events/filter.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { JournalStep, ProjectDoc } from "../model/records.ts";
import { sourceKey } from "./session-env.ts";

/**
 * Steps of one session waiting to be stored at once; past it the session fails. Requests wait
 * for their reply, so only fire-and-forget outcomes can pile up this far.
 */
export const MAX_PENDING_STEPS = 10_000;

/**
 * A step that contradicts the journal: replay cannot go on. `seq`, and what the journal holds
 * there against what the handler does now, for a replay check's report (replay-check.ts).
 */
export class NonDeterminismError extends Error {
  override name = "NonDeterminismError";
  seq = -1;
  recorded = "";
  asked = "";
}

/**
 * Whether a recorded step is an activity waiting to retry: attempts failed, the next one due.
 * @example isPending({ seq: 0, kind: "activity", function: "f", error: "…", attempts: 1, retry_at: 1 }) // true
 */
export function isPending(step: JournalStep): boolean {
  return step.kind === "activity" && step.retry_at !== undefined;
}

/**
 * The steps up to the first gap: a step stored after a later one was lost in a crash.
 * @example contiguous([{ seq: 0, kind: "sleep" }, { seq: 2, kind: "sleep" }]) // seq 0 only
 */
export function contiguous(steps: JournalStep[]): JournalStep[] {
  const out: JournalStep[] = [];
  for (const step of steps) {
    if (step.seq !== out.length) break;
    out.push(step);
  }
  return out;
}

/**
 * One session's journal, owned by the core: it numbers steps (checking the numbers a runtime
 * sends), decides which recorded step answers a replay, and stores new steps in the order they
 * are taken, each before its reply goes out. A non-durable session numbers steps but keeps none.
 * @example
 * const journal = new SessionJournal({ durable: true, steps: [], store: (s) => stores.journals.append(id, s) });
 * journal.begin(); const seq = journal.number(undefined); await journal.record({ seq, kind: "sleep" });
 */
export class SessionJournal {
  readonly durable: boolean;
  #store: (step: JournalStep) => Promise<void>;
  /** Every step known, sorted by seq (storage may hold them out of order). */
  #steps: JournalStep[];
  /** The steps the current run replays: contiguous from 0. */
  #replay: JournalStep[] = [];
  /** The next number the core gives a step that comes without one. */
  #next = 0;
  /** Numbers taken in the current run, past the replayed ones. */
  #taken = new Set<number>();
  /** One past the highest step number taken in the current run. */
  #reached = 0;
  /** Activity steps taken live and waiting to retry: their later steps take the number again. */
  #retrying = new Set<number>();
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  /** Reads the parts of a step's value kept apart (opened); absent: none can be read. */
  #parts: ((step: JournalStep & { kind: "activity" }) => Promise<string[]>) | undefined;

  constructor(opts: {
    durable: boolean;
    steps: JournalStep[];
    store: (step: JournalStep) => Promise<void>;
    parts?: (step: JournalStep & { kind: "activity" }) => Promise<string[]>;
  }) {
    this.durable = opts.durable;
    this.#steps = [...opts.steps].sort((a, b) => a.seq - b.seq);
    this.#store = opts.store;
    this.#parts = opts.parts;
  }

  /**
   * The parts of a recorded activity's value kept apart, read from storage only when a replay
   * asks for it (the journal in memory keeps the step without them); undefined for other steps.
   */
  async partsOf(step: JournalStep): Promise<string[] | undefined> {
    if (step.kind !== "activity" || !step.apart) return undefined;
    const parts = this.#parts ? await this.#parts(step) : [];
    if (parts.length !== step.apart.parts) {
      throw new Error(
        `the journal's step ${step.seq} (${step.function}): ${parts.length} of the ${step.apart.parts} parts of its value can be read`,
      );
    }
    return parts;
  }

  /**
   * Starts a run (the first, or a resume): it replays the steps on record up to the first gap,
   * and numbering goes on after them. Returns the steps replayed.
   */
  begin(): JournalStep[] {
    this.#replay = this.durable ? contiguous(this.#steps) : [];
    this.#next = this.#replay.length;
    this.#taken.clear();
    this.#retrying.clear();
    this.#reached = 0;
    return this.#replay;
  }

  /**
   * The number of the next step: `sent` when the runtime numbers its own (checked: not one
   * taken already), else the count so far. Throws on a repeated number.
   */
  number(sent: number | undefined): number {
    const seq = sent ?? this.#next;
    if (!Number.isInteger(seq) || seq < 0) throw new Error(`step number ${seq} is not valid`);
    // A retried activity's last attempt ends its step: the number is taken for good from here.
    if (this.#taken.has(seq) && !this.#retrying.delete(seq)) {
      throw new Error(`step ${seq} was taken twice`);
    }
    if (seq >= this.#replay.length) this.#taken.add(seq);
    this.#next = Math.max(this.#next, seq + 1);
    this.#reached = Math.max(this.#reached, seq + 1);
    return seq;
  }

  /**
   * Step `seq` of activity `name` failed an attempt and will be tried again: the number stays
   * open for its next record. Returns the step's latest record when it is pending already (an
   * earlier attempt's, or the one a resumed session replays), else null. Throws
   * NonDeterminismError when the journal holds another step there, or the activity finished.
   */
  retrying(seq: number, name: string): JournalStep | null {
    const replayed = this.recorded(seq, "activity", name);
    if (replayed && !isPending(replayed)) {
      throw nonDeterminism(seq, `the journal recorded activity ${name} as finished, not retrying`);
    }
    if (!replayed) {
      if (this.#taken.has(seq) && !this.#retrying.has(seq)) {
        throw new Error(`step ${seq} was taken twice`);
      }
      this.#taken.add(seq);
      this.#retrying.add(seq);
      this.#next = Math.max(this.#next, seq + 1);
      this.#reached = Math.max(this.#reached, seq + 1);
    }
    const latest = this.#steps.find((s) => s.seq === seq);
    return latest && isPending(latest) ? latest : null;
  }

  /**
   * The recorded step that answers step `seq`, or null when `seq` is past the replayed
   * journal (the step runs live). Throws NonDeterminismError when the journal holds another
   * kind of step there, or an activity of another function.
   */
  recorded(seq: number, kind: JournalStep["kind"], name?: string): JournalStep | null {
    const step = this.#replay[seq];
    if (!step) return null;
    const was = step.kind === "activity" ? step.function : undefined;
    if (step.kind !== kind || (kind === "activity" && name !== undefined && was !== name)) {
      const label = (k: string, n?: string) => (k === "activity" ? `${k} ${n}` : `${k} ${k}()`);
      const short = (k: string, n?: string) => (k === "activity" ? `activity ${n}` : `${k}()`);
      throw nonDeterminism(
        seq,
        `the journal recorded ${label(step.kind, was)} but the handler now calls ${label(kind, name)}`,
        short(step.kind, was),
        short(kind, name),
      );
    }
    return step;
  }

  /**
   * NonDeterminismError when the run ended before taking every replayed step (the handler
   * returned where the journal recorded more), else null.
   */
  unfinished(): NonDeterminismError | null {
    if (this.#reached >= this.#replay.length) return null;
    return nonDeterminism(
      this.#reached,
      `the handler returned but the journal recorded ${this.#replay.length} steps`,
    );
  }

  /**
   * Stores a new step after every step taken before it (durable sessions; others resolve at
   * once). Rejects when storing failed: the session cannot go on.
   */
  async record(step: JournalStep): Promise<void> {
    if (!this.durable) return;
    if (this.#pending >= MAX_PENDING_STEPS) {
      throw new Error(`more than ${MAX_PENDING_STEPS} journal steps wait to be stored`);
    }
    this.#pending++;
    const stored = this.#chain.then(() => this.#store(step));
    this.#chain = stored.then(
      () => {},
      () => {},
    );
    try {
      await stored;
    } catch (e) {
      throw new Error(`could not store journal step ${step.seq}: ${errorText(e)}`);
    } finally {
      this.#pending--;
    }
    // A value kept apart stays in storage: the journal here keeps its step without the parts.
    let kept = step;
    if (step.kind === "activity" && step.parts) {
      const { parts: _, ...rest } = step;
      kept = rest;
    }
    const at = this.#steps.findIndex((s) => s.seq >= step.seq);
    if (at === -1) this.#steps.push(kept);
    else this.#steps.splice(at, this.#steps[at]!.seq === step.seq ? 1 : 0, kept);
  }

  /** Resolves once every step recorded so far is stored (or failed). */
  settled(): Promise<void> {
    return this.#chain;
  }

  /**
   * Re-registers, under their recorded ids, the subscriptions the replayed steps hold open,
   * so replayed code keeps using them and events published meanwhile are buffered. Returns
   * those it added (not already open here).
   */
  restoreSubscriptions(
    subscriptions: Subscriptions,
    sessionId: string,
    doc: ProjectDoc,
  ): { id: string; source: string }[] {
    const open = new Map<string, { name: string; filter: string }>();
    for (const step of this.#replay) {
      if (step.kind === "subscribe" && step.value) open.set(step.value, step);
      if (step.kind === "unsubscribe") open.delete(step.id);
    }
    const added: { id: string; source: string }[] = [];
    for (const [id, { name, filter }] of open) {
      const source = sourceKey(doc, name);
      if (!source) continue;
      if (subscriptions.has(id, sessionId)) continue;
      const compiled = filter ? compileFilter(filter) : null;
      subscriptions.add(sessionId, source, compiled, id);
      added.push({ id, source });
    }
    return added;
  }

  /** Ids of the events the replayed steps already took from next_event. */
  consumedEvents(): Set<string> {
    const out = new Set<string>();
    for (const step of this.#replay) {
      const value = step.kind === "next_event" ? step.value : null;
      const id = (value as { event_id?: unknown } | null)?.event_id;
      if (typeof id === "string") out.add(id);
    }
    return out;
  }
}

/**
 * The one wording of a replay that left the journal's path (the runtime's own words never
 * decide it: docs/durability.md).
 * @example nonDeterminism(3, "the handler returned but the journal recorded 5 steps")
 */
function nonDeterminism(seq: number, what: string, recorded = "", asked = ""): NonDeterminismError {
  const error = new NonDeterminismError(
    `NonDeterminismError: step ${seq}: ${what}; a durable handler must make the same calls in the same order`,
  );
  Object.assign(error, { seq, recorded, asked });
  return error;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
