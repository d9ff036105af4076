import * as v from "valibot";

/**
 * The messages a session's Python process sends, one JSON object a line. Every line is checked
 * against `FromPython` before it is acted on; see python-runtime/README.md for the sequence.
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
});

const Activity = v.object({
  type: v.literal("activity"),
  function: v.string(),
  duration_ms: v.pipe(v.number(), v.minValue(0)),
  ok: v.boolean(),
  error: v.nullish(v.string()),
});

const Outcome = v.object({
  type: v.literal("outcome"),
  status_code: v.pipe(int(100), v.maxValue(599)),
  // Checked again here, not only by the SDK: a malformed header must never reach the wire.
  headers: v.record(
    v.pipe(
      v.string(),
      v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "header name is not an HTTP token"),
    ),
    v.pipe(
      v.string(),
      v.regex(/^[\t\x20-\x7e\x80-\xff]*$/, "header value holds CR, LF or a control character"),
    ),
  ),
  body: v.nullable(v.pipe(v.string(), v.base64())),
  more: v.boolean(),
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

const Step = v.pipe(
  v.object({
    type: v.literal("step"),
    seq: int(0),
    kind: v.literal("activity"),
    function: v.string(),
    result: v.nullish(v.pipe(v.string(), v.base64())),
    error: v.nullish(v.pipe(v.string(), v.base64())),
  }),
  v.check((s) => (s.result == null) !== (s.error == null), "a step has a result or an error"),
);

const Done = v.object({
  type: v.literal("done"),
  ok: v.boolean(),
  error: v.nullish(v.string()),
  traceback: v.nullish(v.string()),
});

export const FromPython = v.variant("type", [
  Hello,
  Print,
  Activity,
  Outcome,
  Subscribe,
  NextEvent,
  Unsubscribe,
  Sleep,
  Step,
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
