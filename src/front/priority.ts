import { writeFileSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** The front door's thread as the OS shows it (`top -H`, `ps -L`; at most 15 characters). */
export const FRONT_THREAD_NAME = "hookline-front";

/**
 * Names the calling thread, the front door's, so that `top -H` and `ps -L` (and the bench's CPU
 * split) tell it apart from the host's. Linux only; an older kernel leaves Node's name.
 * @example nameFrontThread(); // in src/front/thread.ts, at its start
 */
export function nameFrontThread(): void {
  if (process.platform !== "linux") return;
  try {
    writeFileSync("/proc/thread-self/comm", FRONT_THREAD_NAME);
  } catch {
    // no /proc/thread-self: the thread keeps Node's name
  }
}

/** How many nice steps the session host's thread runs below the front door's. */
export const HOST_NICE_STEPS = 5;

/** The calling thread's nice value when this module loaded (the host's, before any change). */
const STARTED_AT = niceOfThisThread();

/** This thread's nice value (Linux: `getpriority` of pid 0 is the calling thread's); 0 elsewhere. */
function niceOfThisThread(): number {
  try {
    return process.platform === "linux" ? getPriority(0) : 0;
  } catch {
    return 0;
  }
}

/**
 * Lowers the calling thread, the session host's, HOST_NICE_STEPS below the front door's thread it
 * has just started (which keeps the service's priority): where both want a core, an accept goes
 * first and the sessions' bookkeeping waits (docs/limits.md, "CPU priority"). What the host
 * starts afterwards (fork servers, so sessions) inherits its priority. Linux only, where a
 * thread has a priority of its own (elsewhere it would lower the whole process, the front with
 * it). A thread may lower its priority but not raise it back: a second front door started in
 * the same process (tests) finds the host already lowered and leaves it; a refusal leaves it as
 * it was.
 * @example const worker = new Worker(entry); yieldToFront();
 */
export function yieldToFront(): void {
  if (process.platform !== "linux") return;
  const target = Math.min(19, STARTED_AT + HOST_NICE_STEPS);
  try {
    if (getPriority(0) < target) setPriority(0, target);
  } catch {
    // not permitted here (a sandbox): the host keeps the front's priority
  }
}
