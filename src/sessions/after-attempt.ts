import type { SessionEnd, SessionRecord } from "../model/records.ts";
import { NEVER_STARTED } from "./session-record.ts";
import { shutdownLoss } from "./shutdown-loss.ts";

/** A durable session whose process dies is resumed this many times, then fails. */
export const MAX_RESUMES = 3;

/**
 * What comes after an attempt: run it again from the journal (`end` says why the process died),
 * leave it as stored for the next start (`text` for its log, if not the usual), or end it.
 */
export type AfterAttempt =
  | { next: "resume"; end: Extract<SessionEnd, { state: "crashed" }> }
  | { next: "leave"; text?: string }
  | { next: "finish"; end: SessionEnd };

/** What the lifecycle knows of the session and the service when an attempt ends. */
export interface AttemptFacts {
  /** The service is stopping. */
  closing: boolean;
  /** Someone asked the session to stop. */
  stopRequested: boolean;
}

/**
 * The decision after an attempt ended with `end`: a crashed durable session resumes (at most
 * MAX_RESUMES times) unless stopped, or is left for the next start when the service is stopping;
 * a session the stopping service cut short before it started is left too, unless a request was
 * held for it (it never starts). Everything else ends.
 * @example afterAttempt({ state: "crashed", message: "killed" }, durableRecord, facts) // { next: "resume", … }
 */
export function afterAttempt(
  end: SessionEnd,
  record: SessionRecord,
  { closing, stopRequested }: AttemptFacts,
): AfterAttempt {
  let last = shutdownLoss(end, closing && !stopRequested);
  if (last.state === "crashed" && closing && record.state === "created") {
    // Stopped before it got a process: it never started, so it runs at the next start (or
    // on another instance); unless a request was held for it, which went with this one.
    if (!record.is_sync) return { next: "leave", text: "service stopping before it started" };
    last = NEVER_STARTED;
  }
  if (last.state === "crashed" && record.durable && closing) return { next: "leave" };
  if (last.state === "crashed" && record.durable && !stopRequested) {
    if (record.attempts < MAX_RESUMES) return { next: "resume", end: last };
  }
  return { next: "finish", end: last };
}
