/** Retry policies and attempts (docs/sessions.md, "Retries"): kept in a file of their own. */

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
