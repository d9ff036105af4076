/**
 * A journaled value too big for one message (an activity's pickled result or exception over
 * 1 MiB) travels as `part` messages, each at most 1 MiB before base64, in order, before the step
 * that says `apart` (docs/durability.md). This keeps one session's parts until their step comes.
 */

/** The most bytes one journaled value may hold (pickled, before base64): 64 MiB. */
export const MAX_APART_BYTES = 64 * 1024 * 1024;

/**
 * Values whose parts may be under way at once: one per activity that may run at a time in a
 * session (activities.py: its pool's 8 threads, and the lane that runs a call the workflow
 * thread waits on).
 */
export const MAX_OPEN_VALUES = 9;

/** A value apart as its step describes it. */
export interface Apart {
  field: "result" | "error";
  parts: number;
  bytes: number;
}

/**
 * Bytes a padded base64 text decodes to.
 * @example decodedLength("aGk=") // 2
 */
export function decodedLength(b64: string): number {
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}

/** The words of the limit, one place: Python's (runner/apart.py) says the same. */
export function overLimit(what: string): string {
  return `${what} is over ${MAX_APART_BYTES} bytes (64 MiB), the most a journaled value may hold`;
}

/**
 * One session's parts waiting for their step: checked as they come (size, how many values at
 * once), handed over whole to the step. Returns of `add` and `take` say why a message breaks the
 * protocol, if it does.
 * @example const inbox = new PartsInbox(); inbox.add(3, "aGk="); inbox.take(3, apart)
 */
export class PartsInbox {
  readonly #open = new Map<number, { parts: string[]; bytes: number }>();

  add(seq: number, data: string): string | undefined {
    let value = this.#open.get(seq);
    if (!value) {
      if (this.#open.size >= MAX_OPEN_VALUES) {
        return `parts of more than ${MAX_OPEN_VALUES} values at once`;
      }
      value = { parts: [], bytes: 0 };
      this.#open.set(seq, value);
    }
    value.bytes += decodedLength(data);
    if (value.bytes > MAX_APART_BYTES) {
      this.#open.delete(seq);
      return overLimit(`the value of step ${seq}`);
    }
    value.parts.push(data);
    return undefined;
  }

  /** The parts of step `seq`, once its step says how many and how big they are. */
  take(seq: number, apart: Apart): { parts: string[] } | { violation: string } {
    const value = this.#open.get(seq);
    this.#open.delete(seq);
    if (!value || value.parts.length !== apart.parts || value.bytes !== apart.bytes) {
      const got = value ? `${value.parts.length} parts, ${value.bytes} bytes` : "no parts";
      return {
        violation: `step ${seq} says ${apart.parts} parts of ${apart.bytes} bytes apart, but ${got} came`,
      };
    }
    return { parts: value.parts };
  }
}
