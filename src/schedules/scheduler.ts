import { type Clock, systemClock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { ProjectDoc, TriggerRecord } from "../model/records.ts";
import { parseSchedule, type Schedule } from "./spec.ts";
import type { ScheduleState } from "./state.ts";

/** One firing of a schedule trigger. */
export interface Firing {
  doc: ProjectDoc;
  trigger: TriggerRecord;
  /** The slot fired for. */
  due: Date;
  fired: Date;
  /** Slots before `due` that passed unfired (the service was down) and are folded into this one. */
  missed: number;
}

export interface SchedulerOptions {
  /** The projects as stored: the scheduler reads them at start and on every change. */
  projects: { list(): Promise<ProjectDoc[]>; get(id: string): Promise<ProjectDoc | null> };
  state: ScheduleState;
  /** True for the one instance that fires a trigger's slot (see Cluster.once). */
  claim(triggerId: string, due: number): Promise<boolean>;
  /** Starts the session (or stores the event) of a firing. */
  fire(firing: Firing): Promise<void>;
  log: Logger;
  clock?: Clock;
}

interface Entry {
  doc: ProjectDoc;
  trigger: TriggerRecord;
  schedule: Schedule;
  next: number;
}

/** The longest sleep: a clock that jumps (suspend, NTP) is noticed within a minute. */
const MAX_SLEEP_MS = 60_000;
/** Missed slots counted at most; past it the count says "at least". */
const MAX_COUNT = 1000;

/** Whether a stored trigger runs on the clock. */
const isScheduled = (doc: ProjectDoc, t: TriggerRecord) =>
  t.type === "schedule" && Boolean(t.schedule) && doc.project.active_deployment_id !== null;

function countSlots(schedule: Schedule, after: number, upTo: number): number {
  let n = 0;
  for (let s = schedule.next(new Date(after)); s && s.getTime() <= upTo && n < MAX_COUNT; n++) {
    s = schedule.next(s);
  }
  return n;
}

/**
 * Fires the schedule triggers of every deployed project: one timer for the earliest slot.
 * A slot missed while the service was down fires once at `start()`; `reload(projectId)` after a
 * deploy applies changed, new and removed schedules at once. Every firing is claimed first, so
 * instances sharing storage and Redis fire each slot once.
 * @example const s = new Scheduler({ projects: stores.projects, state, claim, fire, log });
 *   await s.start(); … await s.reload(projectId); … s.dispose();
 */
export class Scheduler {
  #opts: SchedulerOptions;
  #clock: Clock;
  #entries = new Map<string, Entry>();
  #timer: unknown = null;
  #queue: Promise<void> = Promise.resolve();
  #inflight = new Set<Promise<void>>();
  #disposed = false;

  constructor(opts: SchedulerOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
  }

  /** Arms every deployed schedule, firing once those that missed slots while down. */
  start(): Promise<void> {
    return this.#serial(async () => {
      for (const doc of await this.#opts.projects.list()) await this.#arm(doc);
      this.#rearm();
    });
  }

  /** Re-reads one project after a deploy (or its deletion) and re-arms its schedules. */
  reload(projectId: string): Promise<void> {
    return this.#serial(async () => {
      const doc = await this.#opts.projects.get(projectId);
      const keep = new Set(doc?.triggers.filter((t) => isScheduled(doc, t)).map((t) => t.id));
      for (const [id, e] of this.#entries) {
        if (e.doc.project.id !== projectId || keep.has(id)) continue;
        this.#entries.delete(id);
        if (!doc?.triggers.some((t) => t.id === id)) await this.#opts.state.forget(id);
      }
      if (doc) await this.#arm(doc);
      this.#rearm();
    });
  }

  /** Waits for firings under way (tests, shutdown). */
  async idle(): Promise<void> {
    await this.#queue;
    while (this.#inflight.size) await Promise.all([...this.#inflight]);
  }

  /** Stops the timer; firings under way finish. Idempotent. */
  dispose(): void {
    this.#disposed = true;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#entries.clear();
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(() => (this.#disposed ? undefined : work()));
    this.#queue = run.catch((e: unknown) => this.#opts.log.error("scheduler", e));
    return run;
  }

  async #arm(doc: ProjectDoc): Promise<void> {
    const now = this.#clock.now();
    for (const trigger of doc.triggers) {
      if (!isScheduled(doc, trigger)) continue;
      const old = this.#entries.get(trigger.id);
      if (old && old.trigger.updated_at === trigger.updated_at) {
        old.doc = doc; // a var or another trigger changed: same slots, fresh project
        continue;
      }
      let schedule: Schedule;
      try {
        schedule = parseSchedule(trigger.schedule!, trigger.timezone ?? "UTC");
      } catch (e) {
        this.#opts.log.error(`schedule trigger ${trigger.name}: ${(e as Error).message}`);
        continue;
      }
      // Slots before the trigger took its present form are not its to make up.
      const last = await this.#opts.state.lastDue(trigger.id);
      const since = Math.max(last ?? 0, Date.parse(trigger.updated_at));
      const entry: Entry = {
        doc,
        trigger,
        schedule,
        next: schedule.next(new Date(now))!.getTime(),
      };
      this.#entries.set(trigger.id, entry);
      const missed = schedule.latest(new Date(since), new Date(now));
      if (missed) {
        const count = countSlots(schedule, since, missed.getTime());
        this.#fire(entry, missed.getTime(), Math.max(0, count - 1));
      }
    }
  }

  #rearm(): void {
    if (this.#disposed) return;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    let earliest = Infinity;
    for (const e of this.#entries.values()) earliest = Math.min(earliest, e.next);
    if (earliest === Infinity) return;
    const wait = Math.min(Math.max(0, earliest - this.#clock.now()), MAX_SLEEP_MS);
    this.#timer = this.#clock.setTimeout(() => this.#tick(), wait);
  }

  #tick(): void {
    this.#timer = null;
    if (this.#disposed) return;
    const now = this.#clock.now();
    for (const e of this.#entries.values()) {
      if (e.next > now) continue;
      // Past more than one slot (a stalled process): fire the latest, once.
      const due = e.schedule.latest(new Date(e.next - 1), new Date(now))?.getTime() ?? e.next;
      const skipped = due === e.next ? 0 : countSlots(e.schedule, e.next - 1, due) - 1;
      e.next = e.schedule.next(new Date(now))!.getTime();
      this.#fire(e, due, skipped);
    }
    this.#rearm();
  }

  #fire(entry: Entry, due: number, missed: number): void {
    const { trigger, doc } = entry;
    const work = (async () => {
      if (!(await this.#opts.claim(trigger.id, due))) return;
      const last = await this.#opts.state.lastDue(trigger.id);
      if (last !== null && last >= due) return; // fired already, by this or another instance
      await this.#opts.state.setLastDue(trigger.id, due);
      const fired = new Date(this.#clock.now());
      await this.#opts.fire({ doc, trigger, due: new Date(due), fired, missed });
    })().catch((e: unknown) => {
      this.#opts.log.error(`schedule trigger ${doc.project.name}/${trigger.name}`, e);
    });
    this.#inflight.add(work);
    void work.finally(() => this.#inflight.delete(work));
  }
}
