import type { AttemptInfo } from "../model/records.ts";

/**
 * An activity's attempt under a retry policy in words, one wording for `cli session log` and the
 * web UI: which attempt of how many, and what follows it (the wait before the next, none left,
 * or an error the policy does not retry).
 * @example attemptText({ attempt: 1, of: 5, next_in_ms: 2000 }, false) // "attempt 1 of 5, next in 2 s"
 */
export function attemptText(r: AttemptInfo, ok: boolean): string {
  const which = `attempt ${r.attempt} of ${r.of}`;
  if (r.next_in_ms !== undefined)
    return `${which}, next in ${Number((r.next_in_ms / 1000).toFixed(2))} s`;
  if (ok || r.attempt >= r.of) return which;
  return `${which}, not retried`;
}
