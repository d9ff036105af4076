import * as v from "valibot";
import type {
  DeploymentRecord,
  EventRecord,
  ProjectRecord,
  SessionLogEntry,
  SessionRecord,
} from "../../model/records.ts";
import { Base64 } from "../../wire/checks.ts";
import { Attempt, journalRetryFields, RetryPolicy, rerunFields } from "./retry-schemas.ts";

/**
 * What the management API answers, declared once: the OpenAPI document is generated from these
 * (openapi.ts), and openapi.test.ts checks real responses against that document. Strict objects,
 * so a field a view adds without saying so here fails the test rather than going undocumented.
 */

const time = v.pipe(v.string(), v.isoTimestamp(), v.description("ISO-8601 time, UTC"));
const id = (prefix: string) => v.pipe(v.string(), v.startsWith(`${prefix}_`));
const SessionState = v.picklist(["created", "running", "completed", "error", "stopped"]);

/** RFC 9457 problem details; some errors add members (`issues`, `session_id`, `state`). */
export const Problem = v.looseObject({
  type: v.string(),
  title: v.string(),
  status: v.pipe(v.number(), v.integer()),
  detail: v.string(),
});

export const Project = v.strictObject({
  id: id("prj"),
  name: v.string(),
  display_name: v.optional(
    v.pipe(v.string(), v.description("the manifest's project.display_name, when given")),
  ),
  manifest_version: v.optional(
    v.pipe(v.picklist(["v1", "v2"]), v.description("the version: of the manifest deployed last")),
  ),
  env_id: id("env"),
  active_deployment_id: v.nullable(id("dep")),
  created_at: time,
  updated_at: time,
}) satisfies v.GenericSchema<unknown, ProjectRecord>;

export const Env = v.strictObject({
  id: id("env"),
  project_id: id("prj"),
  project: v.pipe(v.string(), v.description("the project's name")),
  name: v.literal("default"),
});

export const Deployment = v.strictObject({
  id: id("dep"),
  project_id: id("prj"),
  build_id: id("bld"),
  state: v.picklist(["active", "inactive"]),
  created_at: time,
  updated_at: time,
}) satisfies v.GenericSchema<unknown, DeploymentRecord>;

export const Trigger = v.strictObject({
  id: id("trg"),
  project_id: id("prj"),
  project: v.string(),
  name: v.string(),
  type: v.picklist(["webhook", "schedule", "connection"]),
  /** "" (both) for schedule and connection triggers. */
  webhook_id: v.string(),
  webhook_path: v.pipe(v.string(), v.description('"/webhooks/<webhook_id>", or ""')),
  schedule: v.nullable(v.pipe(v.string(), v.description("cron text or descriptor"))),
  timezone: v.nullable(v.string()),
  connection: v.nullable(v.string()),
  active: v.pipe(
    v.boolean(),
    v.description(
      "false for triggers of connections whose integration delivers no events here (not github, slack or http)",
    ),
  ),
  next_fire: v.nullable(v.pipe(time, v.description("a schedule's next slot, if deployed"))),
  event_type: v.pipe(v.string(), v.description('lower-case method, or "" for every method')),
  call: v.nullable(v.pipe(v.string(), v.includes(":"), v.description("file.py:function"))),
  is_sync: v.boolean(),
  is_durable: v.boolean(),
  pickle_values: v.optional(
    v.pipe(
      v.boolean(),
      v.description("activity values go through pickle (version: v2, or durable)"),
    ),
  ),
  reuse_process: v.optional(
    v.pipe(
      v.boolean(),
      v.description(
        "true, present only when set: its sessions may run in a process an earlier one left",
      ),
    ),
  ),
  filter: v.pipe(v.string(), v.description('CEL text, or ""')),
  retry: v.optional(
    v.pipe(RetryPolicy, v.description("the retry policy of its sessions' activities, when set")),
  ),
  created_at: time,
  updated_at: time,
});

export const Connection = v.strictObject({
  id: v.pipe(v.string(), v.description("con_…; sessions see it as <name>__connection_id")),
  project_id: id("prj"),
  project: v.string(),
  name: v.string(),
  integration: v.string(),
  status: v.strictObject({
    state: v.pipe(
      v.picklist(["ready", "needs", "no_events"]),
      v.description("no_events: an integration that delivers no events here (vars only)"),
    ),
    needs: v.pipe(
      v.array(v.string()),
      v.description(
        'missing vars by short name (set as <name>__<var>); a choice reads "a or b"; "authorization" first for an OAuth connection with no token yet (cli connection authorize)',
      ),
    ),
  }),
  inbound_path: v.pipe(
    v.string(),
    v.description('where its provider posts: "/inbound/<id>" (a secret), "/google/pubsub/…", ""'),
  ),
  created_at: time,
  updated_at: time,
});

export const Var = v.strictObject({
  name: v.string(),
  value: v.pipe(v.string(), v.description('"********" when secret')),
  secret: v.boolean(),
  description: v.pipe(v.string(), v.description('the manifest\'s description of the var, or ""')),
  source: v.picklist(["manifest", "cli"]),
  updated_at: time,
});

export const Session = v.strictObject({
  id: id("ses"),
  project_id: id("prj"),
  project_name: v.string(),
  deployment_id: id("dep"),
  build_id: id("bld"),
  trigger_id: v.union([
    id("trg"),
    v.pipe(v.literal(""), v.description("none: a session started by hand (manual)")),
  ]),
  trigger_name: v.pipe(v.string(), v.description('"" for a session started by hand')),
  event_id: id("evt"),
  entry: v.pipe(v.string(), v.description("file.py:function")),
  durable: v.boolean(),
  pickle_values: v.optional(
    v.pipe(
      v.boolean(),
      v.description("activity values go through pickle (version: v2, or durable)"),
    ),
  ),
  reuse_process: v.optional(
    v.pipe(
      v.boolean(),
      v.description("its trigger's reuse_process: it may have run in a reused process"),
    ),
  ),
  is_sync: v.boolean(),
  state: SessionState,
  error: v.nullable(v.strictObject({ message: v.string(), traceback: v.optional(v.string()) })),
  attempts: v.pipe(v.number(), v.integer(), v.minValue(0)),
  replayed_steps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  timer: v.optional(
    v.nullable(v.strictObject({ seq: v.pipe(v.number(), v.integer()), until: v.number() })),
  ),
  outcome_value: v.optional(
    v.pipe(v.unknown(), v.description("what outcome(value) set last, in the SDK's wire form")),
  ),
  parent_id: v.optional(v.pipe(id("ses"), v.description("the session that start()ed this one"))),
  manual: v.optional(v.pipe(v.boolean(), v.description("true: started by hand, no trigger"))),
  memo: v.optional(
    v.pipe(v.record(v.string(), v.string()), v.description("start(…, memo=…) of this session")),
  ),
  traceparent: v.optional(
    v.pipe(v.string(), v.description("W3C traceparent of the session's span (tracing on)")),
  ),
  ...rerunFields,
  created_at: time,
  started_at: v.nullable(time),
  ended_at: v.nullable(time),
  updated_at: time,
}) satisfies v.GenericSchema<unknown, SessionRecord>;

const outside = v.optional(v.pipe(v.literal(true), v.description("not the workflow's print")));
const entry = <K extends string, T extends v.ObjectEntries>(kind: K, fields: T) =>
  v.strictObject({ t: time, kind: v.literal(kind), ...fields });
export const LogEntry = v.variant("kind", [
  entry("print", { text: v.string(), stream: v.picklist(["stdout", "stderr"]), outside }),
  entry("state", { state: SessionState, detail: v.optional(v.string()) }),
  entry("activity", {
    function: v.string(),
    duration_ms: v.pipe(v.number(), v.minValue(0)),
    ok: v.boolean(),
    error: v.optional(v.string()),
    replayed: v.optional(v.boolean()),
    retry: v.optional(Attempt),
  }),
  entry("outcome", {
    status_code: v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(599)),
    headers: v.record(v.string(), v.string()),
    body: v.nullable(Base64),
    more: v.boolean(),
    sent: v.boolean(),
  }),
  entry("warning", { text: v.string() }),
  entry("subscribe", { subscription_id: v.string(), source: v.string(), filter: v.string() }),
  entry("event", { subscription_id: v.nullable(v.string()), event_id: v.nullable(v.string()) }),
]) satisfies v.GenericSchema<unknown, SessionLogEntry>;

/** A durable session's journal step as the log shows it: no pickled payloads. */
export const JournalEntry = v.strictObject({
  seq: v.pipe(v.number(), v.integer(), v.minValue(0)),
  kind: v.picklist([
    "activity",
    "subscribe",
    "next_event",
    "unsubscribe",
    "sleep",
    "outcome",
    "store",
    "start_session",
    "signal",
    "next_signal",
    "outcome_value",
    "webhook_url",
  ]),
  function: v.optional(v.string()),
  source: v.optional(v.string()),
  subscription_id: v.optional(v.string()),
  event_id: v.optional(v.string()),
  ok: v.boolean(),
  replayed: v.pipe(v.boolean(), v.description("the latest run replayed it from the journal")),
  ...journalRetryFields,
});

const WebhookData = v.strictObject({
  method: v.string(),
  raw_url: v.string(),
  url: v.strictObject({
    path: v.string(),
    query: v.record(v.string(), v.string()),
    path_suffix: v.pipe(v.string(), v.description('below "<webhook_id>/": "a/b", or ""')),
  }),
  headers: v.record(v.string(), v.string()),
  body: v.strictObject({
    bytes: Base64,
    text: v.nullable(v.string()),
    json: v.unknown(),
    form: v.nullable(v.record(v.string(), v.string())),
  }),
});

/** A schedule firing's `data` (see docs/manifest.md, "Schedules"). */
const ScheduleData = v.strictObject({
  schedule: v.string(),
  timezone: v.string(),
  due: time,
  fired: time,
  missed: v.pipe(v.number(), v.description("slots missed while the service was down")),
});

export const Event = v.strictObject({
  id: id("evt"),
  project_id: id("prj"),
  trigger_id: v.union([
    id("trg"),
    v.pipe(v.literal(""), v.description("a connection's event that started none; a manual run's")),
  ]),
  trigger_name: v.string(),
  webhook_id: v.string(),
  connection: v.optional(
    v.pipe(v.string(), v.description("the connection whose verified request made this event")),
  ),
  event_type: v.string(),
  data: v.union([
    WebhookData,
    ScheduleData,
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.description("a connection's event: its provider's payload (docs/connections.md)"),
    ),
  ]),
  sdk_data: v.optional(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.description("an event made by start(): the new session's event.data, wire form"),
    ),
  ),
  session_id: v.nullable(id("ses")),
  created_at: time,
}) satisfies v.GenericSchema<unknown, EventRecord>;
