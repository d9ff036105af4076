import * as v from "valibot";
import { ReplayReportSchema } from "../../wire/replay-report.ts";
import { defineRoute } from "../validate.ts";

// What the API takes and answers of retries and re-runs (docs/sessions.md, "Retries", "Re-running a
// session"): in schemas.ts's shapes, declared here.

const time = v.pipe(v.string(), v.isoTimestamp(), v.description("ISO-8601 time, UTC"));
const count = (min: number) => v.pipe(v.number(), v.integer(), v.minValue(min));

/** A retry policy (manifest `retry:`), seconds. */
export const RetryPolicy = v.strictObject({
  max_attempts: count(1),
  initial_interval: v.pipe(v.number(), v.minValue(0)),
  backoff: v.pipe(v.number(), v.minValue(1)),
  max_interval: v.pipe(v.number(), v.minValue(0)),
  non_retryable: v.array(v.string()),
});

/** An activity's attempt under a retry policy, as its log entry carries it. */
export const Attempt = v.pipe(
  v.strictObject({
    attempt: count(1),
    of: count(1),
    next_in_ms: v.optional(v.pipe(v.number(), v.minValue(0))),
  }),
  v.description("an attempt under a retry policy; next_in_ms: the wait before the next"),
);

/** A session's retry policy and, for a re-run, what it re-runs. */
export const rerunFields = {
  retry: v.optional(v.pipe(RetryPolicy, v.description("its trigger's retry: when it started"))),
  rerun_of: v.optional(
    v.pipe(v.string(), v.startsWith("ses_"), v.description("the session this one re-runs")),
  ),
  rerun_from_step: v.optional(
    v.pipe(count(0), v.description("how many of that session's journal steps it reused")),
  ),
};

/** A journal step's attempts, and when a pending one's next attempt is due. */
export const journalRetryFields = {
  attempts: v.optional(v.pipe(count(1), v.description("attempts under a retry policy"))),
  retry_at: v.optional(
    v.pipe(time, v.description("an activity waiting to retry: when its next attempt is due")),
  ),
};

/** A re-run's start: `failure` (the failed step) or a step number, as the query gives it. */
export const RerunFromQuery = v.pipe(
  v.string(),
  v.regex(/^(failure|\d{1,9})$/, 'must be "failure" or a step number'),
  v.description('"failure": from the failed step; N: from step N (its steps 0 to N-1 replayed)'),
);

export const RERUN_SUMMARY =
  "Start a new session from the stored event of this one, on the active deployment (503 when too many sessions wait); with `from`, a durable session that ended is re-run from its failed step or step N: its journal up to there is replayed (results reused), the rest runs live (409 when it cannot be: not durable, not failed, or the current code diverges before that step)";

/** The latest replay check of a project (`cli deploy --check-replay`): spread into the table. */
export const replayApi = {
  replayCheck: defineRoute({
    method: "get",
    path: "/projects/{ref}/replay-check",
    summary:
      "The latest replay check of a project's deploys (`cli deploy --check-replay`): the sessions replayed against the new build, those that diverge, and whether the deploy went ahead",
    params: v.object({ ref: v.pipe(v.string(), v.description("prj_…: an id or a project name")) }),
    ok: {
      200: {
        description: "The report",
        schema: v.strictObject({ replay_check: ReplayReportSchema }),
      },
    },
    errors: [404],
  }),
};
