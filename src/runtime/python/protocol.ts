import * as v from "valibot";
import { Base64, HeaderMap } from "../../wire/checks.ts";

/**
 * The messages a session's Python process sends, one JSON object a line. Every line is checked
 * against `FromPython` before it is acted on. The protocol is defined once, in
 * python-runtime/workflow_sdk/runner/protocol.json: protocol.test.ts checks these schemas against
 * it member by member, and against the fixtures the Python tests load too
 * (python-runtime/tests/fixtures/protocol.json). The sequence is in python-runtime/README.md.
 */

const int = (min: number) => v.pipe(v.number(), v.integer(), v.minValue(min));
const req = int(0);
/** Optional on steps the service journals: the child's own step number, when it sends one. */
const seq = v.optional(int(0));

const Hello = v.object({ type: v.literal("hello"), pid: int(2) });

const Print = v.object({
  type: v.literal("print"),
  text: v.string(),
  stream: v.picklist(["stdout", "stderr"]),
  /** From an activity's thread or a child process, not the workflow code. */
  outside: v.optional(v.literal(true)),
});

/** A live activity still running 50 ms after it began (never a replayed one); older runners send none. */
const ActivityStarted = v.object({
  type: v.literal("activity_started"),
  id: int(1),
  function: v.string(),
  /** How long it had run when told. */
  running_ms: v.optional(v.pipe(v.number(), v.minValue(0))),
});

const Activity = v.object({
  type: v.literal("activity"),
  /** The `id` of its `activity_started`, on the report that ends it. */
  id: v.optional(int(1)),
  function: v.string(),
  duration_ms: v.pipe(v.number(), v.minValue(0)),
  ok: v.boolean(),
  error: v.nullish(v.string()),
  /** An attempt under a retry policy: its number, of how many, the wait (s) before the next. */
  retry: v.optional(
    v.object({
      attempt: int(1),
      of: int(1),
      next_in: v.optional(v.pipe(v.number(), v.minValue(0))),
    }),
  ),
});

const Outcome = v.object({
  type: v.literal("outcome"),
  status_code: v.pipe(int(100), v.maxValue(599)),
  headers: HeaderMap,
  body: v.nullable(Base64),
  more: v.boolean(),
  /** http_outcome(event_id=…): the event whose held request this answers. */
  event_id: v.nullish(v.string()),
  seq,
});

const Subscribe = v.object({
  type: v.literal("subscribe"),
  req,
  name: v.string(),
  filter: v.string(),
  seq,
});

const NextEvent = v.object({
  type: v.literal("next_event"),
  req,
  ids: v.pipe(v.array(v.string()), v.minLength(1)),
  timeout: v.nullable(v.pipe(v.number(), v.minValue(0))),
  seq,
});

const Unsubscribe = v.object({ type: v.literal("unsubscribe"), req, id: v.string(), seq });

/** `time.sleep` in a durable session: a timer the service keeps (and journals when it fires). */
const Sleep = v.object({
  type: v.literal("sleep"),
  req,
  seconds: v.pipe(v.number(), v.minValue(0), v.maxValue(366 * 24 * 3600)),
  seq,
});

/** A value in the SDK's wire form (python-runtime/workflow_sdk/values.py): JSON, `$`-tagged. */
const wire = v.unknown();

/** The SDK's requests answered by the service (store, sessions, signals, outcome, URLs). */
const Store = v.object({
  type: v.literal("store"),
  req,
  op: v.picklist([
    "get",
    "set",
    "del",
    "add",
    "check_and_set",
    "list_keys",
    "publish",
    "unpublish",
    "public_url",
  ]),
  key: v.optional(v.string()),
  args: v.optional(v.array(wire)),
  seq,
});

const StartSession = v.object({
  type: v.literal("start_session"),
  req,
  loc: v.string(),
  data: wire,
  memo: v.optional(v.record(v.string(), v.string())),
  project: v.optional(v.string()),
  seq,
});

const Signal = v.object({
  type: v.literal("signal"),
  req,
  session_id: v.string(),
  name: v.string(),
  payload: v.nullish(wire),
  seq,
});

const NextSignal = v.object({
  type: v.literal("next_signal"),
  req,
  names: v.pipe(v.array(v.string()), v.minLength(1)),
  timeout: v.nullish(v.pipe(v.number(), v.minValue(0))),
  seq,
});

const OutcomeValue = v.object({
  type: v.literal("outcome_value"),
  req,
  value: v.nullish(wire),
  seq,
});

const WebhookUrl = v.object({ type: v.literal("webhook_url"), req, trigger: v.string(), seq });

/** A GitHub App JWT the service signs (src/sessions/app-jwt.ts): never numbered nor journaled. */
const EncodeJwt = v.object({
  type: v.literal("encode_jwt"),
  req,
  payload: v.record(v.string(), v.unknown()),
  connection: v.string(),
  algorithm: v.string(),
  /** The SDK sends none; one sent is ignored: the host never journals this request. */
  seq,
});

/** A connection's OAuth token, refreshed by the service; never journaled (Python sends no `seq`). */
const RefreshOAuth = v.object({
  type: v.literal("refresh_oauth"),
  req,
  integration: v.string(),
  connection: v.string(),
  seq,
});

/** A durable replay asks for the journal's record of an activity instead of running it. */
const ReplayActivity = v.object({
  type: v.literal("replay_activity"),
  req,
  seq: int(0),
  function: v.string(),
  /** A replay check's digest of the arguments now. */
  args: v.optional(v.string()),
});

/** A durable activity's failed attempt that its retry policy tries again after `seconds`. */
const Retry = v.object({
  type: v.literal("retry"),
  req,
  seq: int(0),
  function: v.string(),
  attempt: int(1),
  seconds: v.pipe(v.number(), v.minValue(0), v.maxValue(366 * 24 * 3600)),
  error: Base64,
});

/** A pickled value too big for its step: sent before it in `part` messages (apart.ts). */
const Apart = v.object({
  field: v.picklist(["result", "error"]),
  parts: int(1),
  bytes: int(1),
});

const Step = v.pipe(
  v.object({
    type: v.literal("step"),
    seq: int(0),
    kind: v.literal("activity"),
    function: v.string(),
    result: v.nullish(Base64),
    error: v.nullish(Base64),
    args: v.optional(v.string()),
    attempts: v.optional(int(1)),
    apart: v.nullish(Apart),
  }),
  v.check(
    (s) => [s.result, s.error, s.apart].filter((x) => x != null).length === 1,
    "a step has a result, an error, or a value apart",
  ),
);

/** One part of a step's value apart, in order, before the step. */
const Part = v.object({ type: v.literal("part"), seq: int(0), data: Base64 });

const Done = v.object({
  type: v.literal("done"),
  ok: v.boolean(),
  error: v.nullish(v.string()),
  traceback: v.nullish(v.string()),
  value: v.optional(v.unknown()),
  /** The process stays for another session (a start with `reuse: true`; see reuse.ts). */
  reuse: v.optional(v.boolean()),
  /** Fresh modules: importing the project anew cost more than a process of its own (reuse.ts). */
  slow_import: v.optional(v.boolean()),
});

export const FromPython = v.variant("type", [
  Hello,
  Print,
  ActivityStarted,
  Activity,
  Outcome,
  Subscribe,
  NextEvent,
  Unsubscribe,
  Sleep,
  Store,
  StartSession,
  Signal,
  NextSignal,
  OutcomeValue,
  WebhookUrl,
  EncodeJwt,
  RefreshOAuth,
  ReplayActivity,
  Retry,
  Step,
  Part,
  Done,
]);

export type FromPython = v.InferOutput<typeof FromPython>;
export type RequestMessage = Extract<FromPython, { req: number }>;

/** Parses one line; returns the message or a short reason it was refused. */
export function parseMessage(
  line: string,
): { ok: true; message: FromPython } | { ok: false; reason: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reason: `not JSON: ${preview(line)}` };
  }
  const parsed = v.safeParse(FromPython, raw);
  if (parsed.success) return { ok: true, message: parsed.output };
  const issue = parsed.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
  return { ok: false, reason: `${path ? `${path}: ` : ""}${issue.message} in ${preview(line)}` };
}

function preview(line: string): string {
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
