import type { SessionLogEntry } from "../model/records.ts";
import type { ActivityInFlight } from "../model/run-records.ts";

/** One print is cut here. */
export const MAX_PRINT_BYTES = 64 * 1024;
/** After this many prints a session keeps one notice instead of more. */
export const MAX_PRINTS = 10_000;
/** Entries of other kinds (activities, outcomes, …) a session keeps; past it, one notice. */
export const MAX_OTHER_ENTRIES = 10_000;

type Listener = (entry: SessionLogEntry) => void;
type StartListener = (activity: ActivityInFlight) => void;

/**
 * A running session's log in memory: bounded, written behind to storage by its owner, and
 * watchable. Entries keep the order they happened in.
 */
export class SessionLog {
  readonly entries: SessionLogEntry[];
  #prints = 0;
  #workflowPrints = 0;
  #others = 0;
  #listeners = new Set<Listener>();
  #starts = new Set<StartListener>();
  /**
   * Activities running now, by their number in the process: told as they start, gone with the
   * entry that ends them (or with the attempt). Never stored: the page of a running session
   * shows them as they run.
   */
  readonly inFlight = new Map<number, ActivityInFlight>();
  dirty = false;

  constructor(entries: SessionLogEntry[] = []) {
    this.entries = entries;
    for (const e of entries) {
      if (e.kind === "print") {
        this.#prints++;
        if (!e.outside) this.#workflowPrints++;
      } else this.#others++;
    }
  }

  /** Prints kept so far (earlier runs' too, for a log read back from storage). */
  get prints(): number {
    return this.#prints;
  }

  /** Of those, the workflow code's: the ones a replay makes again (not an activity's). */
  get workflowPrints(): number {
    return this.#workflowPrints;
  }

  /** An activity began running: in flight, told to who listens for starts; nothing stored. */
  started(activity: ActivityInFlight): void {
    this.inFlight.set(activity.id, activity);
    for (const l of this.#starts) l(activity);
  }

  /** `ended`: the activity in flight this entry ends (its id), no longer in flight once told. */
  append(entry: SessionLogEntry, ended?: number): void {
    if (ended !== undefined) this.inFlight.delete(ended);
    if (entry.kind === "print") {
      if (this.#prints >= MAX_PRINTS) {
        if (this.#prints === MAX_PRINTS) {
          this.#prints++;
          this.#push({
            t: entry.t,
            kind: "warning",
            text: `more than ${MAX_PRINTS} prints: later prints are not kept`,
          });
        }
        return;
      }
      this.#prints++;
      if (!entry.outside) this.#workflowPrints++;
      if (Buffer.byteLength(entry.text) > MAX_PRINT_BYTES) {
        const cut = Buffer.from(entry.text).subarray(0, MAX_PRINT_BYTES).toString("utf8");
        entry = { ...entry, text: `${cut}… [cut at 64 KiB]` };
      }
    } else if (this.#others >= MAX_OTHER_ENTRIES) {
      if (this.#others++ === MAX_OTHER_ENTRIES) {
        this.#push({ t: entry.t, kind: "warning", text: "log full: later entries are not kept" });
      }
      return;
    } else {
      this.#others++;
    }
    this.#push(entry);
  }

  #push(entry: SessionLogEntry) {
    this.entries.push(entry);
    this.dirty = true;
    for (const l of this.#listeners) l(entry);
  }

  listen(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hears each activity as it starts (see `inFlight`). Returns unlisten. */
  listenStarts(listener: StartListener): () => void {
    this.#starts.add(listener);
    return () => this.#starts.delete(listener);
  }
}
