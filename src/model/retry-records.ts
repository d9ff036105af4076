/**
 * Retry policies, attempts and re-runs (docs/sessions.md, "Retries", "Re-running a session"):
 * what records.ts's records carry of them, kept in a file of their own.
 */

/**
 * A trigger's retry policy (manifest `retry:`), as Python's `RetryPolicy.to_wire()` gives it:
 * seconds, and the exception names that are never retried.
 */
export interface RetryPolicy {
  max_attempts: number;
  initial_interval: number;
  backoff: number;
  max_interval: number;
  non_retryable: string[];
}

/** One attempt of an activity under a retry policy: its number, of how many, the wait after it. */
export interface AttemptInfo {
  attempt: number;
  of: number;
  /** Milliseconds before the next attempt; absent: none follows. */
  next_in_ms?: number;
}

/** A session's retry policy and, for a re-run from a step, what it re-runs (its SessionRecord). */
export interface SessionRetry {
  /** Its trigger's `retry:` when it was created: kept for its resumes. */
  retry?: RetryPolicy;
  /** A re-run: the session it re-runs, and how many of its journal steps it replays. */
  rerun_of?: string;
  rerun_from_step?: number;
}

/** A durable activity's journal step (records.ts's JournalStep). Pickled values are base64. */
export interface ActivityStep {
  seq: number;
  kind: "activity";
  function: string;
  result?: string;
  error?: string;
  /** A digest of its pickled arguments, which a replay check compares. */
  args?: string;
  /** Under a retry policy: the attempts made (so far, while `retry_at` is set). */
  attempts?: number;
  /** Pending: attempt `attempts` failed with `error`, the next is due then (epoch ms). */
  retry_at?: number;
  /** A value over 1 MiB kept apart from the step (docs/durability.md): its member, parts, bytes. */
  apart?: { field: "result" | "error"; parts: number; bytes: number };
  /** That value's parts (base64; sealed once stored) on their way to storage or to a replay. */
  parts?: string[];
}
