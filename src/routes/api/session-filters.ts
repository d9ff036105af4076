/** The sessions list's filters (trigger, state, time range, search) as `GET /sessions` takes them. */
import * as v from "valibot";
import { TriggerName } from "../../manifest/index.ts";

/** An ISO-8601 time in a query (`2026-12-06T04:00:00Z`); the route reads it with Date.parse. */
const Instant = v.pipe(
  v.string(),
  v.check((t) => !Number.isNaN(Date.parse(t)), "must be an ISO-8601 time"),
);

const STATES = ["created", "running", "completed", "error", "stopped"] as const;

/** `GET /sessions`'s filters past the project (src/storage/session-scan.ts applies them). */
export const sessionFilters = v.object({
  trigger: v.optional(v.pipe(TriggerName, v.description("only this trigger's sessions"))),
  state: v.optional(v.picklist(STATES, `must be one of ${STATES.join(", ")}`)),
  since: v.optional(
    v.pipe(Instant, v.description("only sessions created at or after this ISO-8601 time")),
  ),
  until: v.optional(
    v.pipe(Instant, v.description("only sessions created before this ISO-8601 time")),
  ),
  before: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^ses_[0-9a-z]{26}$/, "before must be a session id (ses_…)"),
      v.description("only sessions older than this one: a previous answer's `next`"),
    ),
  ),
  q: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "q is at most 200 characters"),
      v.description(
        "a session id (that session), an event id (its sessions), or text in the session's error or prints (case-insensitive; a bounded scan, see `more`)",
      ),
    ),
  ),
});
