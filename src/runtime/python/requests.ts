import type { ActivityReport, HandlerEvent, SessionEnd } from "../../model/records.ts";
import type { SessionSpec, StepReply, StepRequest } from "../runtime.ts";
import type { FromPython, RequestMessage } from "./protocol.ts";
import { reuseMode } from "./reuse.ts";

type Message<T extends FromPython["type"]> = Extract<FromPython, { type: T }>;

/**
 * The step a request message (`subscribe`, `next_event`, `unsubscribe`, `sleep`, the SDK's) asks of the host, with
 * the child's seq when it sent one (durable sessions): translation only, the host numbers and
 * journals the step.
 * @example toStepRequest({ type: "sleep", req: 1, seconds: 2, seq: 4 }) // { kind: "sleep", ms: 2000, seq: 4 }
 */
export function toStepRequest(m: RequestMessage): StepRequest {
  const seq = m.seq === undefined ? {} : { seq: m.seq };
  switch (m.type) {
    case "subscribe":
      return { kind: "subscribe", name: m.name, filter: m.filter, ...seq };
    case "next_event":
      return {
        kind: "next_event",
        ids: m.ids,
        timeoutMs: m.timeout === null ? null : m.timeout * 1000,
        ...seq,
      };
    case "unsubscribe":
      return { kind: "unsubscribe", id: m.id, ...seq };
    case "sleep":
      return { kind: "sleep", ms: m.seconds * 1000, ...seq };
    case "replay_activity":
      // No result: the host answers it from the journal, never runs it (steps.ts).
      return {
        kind: "activity",
        seq: m.seq,
        function: m.function,
        ...(m.args !== undefined && { args: m.args }),
      };
    case "retry":
      return {
        kind: "retry",
        seq: m.seq,
        function: m.function,
        attempt: m.attempt,
        ms: m.seconds * 1000,
        error: m.error,
      };
    default: {
      const { type, req: _req, seq: _seq, ...fields } = m;
      return { kind: type, fields, ...seq };
    }
  }
}

/**
 * The `reply` message for the host's answer to request `req`: a refusal carries the name of the
 * exception Python raises and its message.
 * @example toReplyMessage(3, { ok: true, value: "sub_1" }) // { type: "reply", req: 3, ok: true, value: "sub_1" }
 */
export function toReplyMessage(req: number, reply: StepReply) {
  return reply.ok
    ? { type: "reply", req, ok: true, value: reply.value ?? null }
    : { type: "reply", req, ok: false, error: reply.error, message: reply.message };
}

/**
 * The `outcome` step an `outcome` message asks for (its body decoded from base64), with the
 * child's seq when it sent one. Nobody answers it: Python does not wait.
 * @example toOutcomeStep({ type: "outcome", status_code: 200, headers: {}, body: null, more: false })
 */
export function toOutcomeStep(m: Message<"outcome">): StepRequest {
  return {
    kind: "outcome",
    outcome: {
      status_code: m.status_code,
      headers: m.headers,
      body: m.body === null ? null : Buffer.from(m.body, "base64"),
      more: m.more,
      ...(m.event_id ? { event_id: m.event_id } : {}),
    },
    ...(m.seq === undefined ? {} : { seq: m.seq }),
  };
}

/**
 * The `activity` step a durable session's `step` message records: its result or its error, or
 * its value apart with the parts that came before it.
 * @example toActivityStep({ type: "step", seq: 2, kind: "activity", function: "f", result: "gA==" })
 */
export function toActivityStep(m: Message<"step">, parts?: string[]): StepRequest {
  const step: StepRequest = { kind: "activity", seq: m.seq, function: m.function };
  if (m.result != null) step.result = m.result;
  if (m.error != null) step.error = m.error;
  if (m.apart != null && parts) Object.assign(step, { apart: m.apart, parts });
  if (m.args !== undefined) step.args = m.args;
  if (m.attempts !== undefined) step.attempts = m.attempts;
  return step;
}

/** The log line an `activity` message reports (any session). */
export function toActivityReport(m: Message<"activity">): ActivityReport {
  return {
    ...(m.id !== undefined && { id: m.id }),
    function: m.function,
    duration_ms: m.duration_ms,
    ok: m.ok,
    ...(m.error == null ? {} : { error: m.error }),
    ...(m.retry && { retry: attemptInfo(m.retry) }),
  };
}

/** An attempt as the log keeps it: the wait in milliseconds. */
function attemptInfo(r: { attempt: number; of: number; next_in?: number | undefined }) {
  const { attempt, of, next_in } = r;
  return { attempt, of, ...(next_in !== undefined && { next_in_ms: next_in * 1000 }) };
}

/**
 * How the session ended by the handler's own account (`done`): its value, or its error and
 * traceback. The traceback names the project's files by their paths in the project
 * (`File "handlers.py"`), not the build's copy the process ran (`projectDir`, under the data home).
 * @example toSessionEnd({ type: "done", ok: true, value: 1 }) // { state: "completed", value: 1 }
 */
export function toSessionEnd(m: Message<"done">, projectDir?: string): SessionEnd {
  if (m.ok) return { state: "completed", ...(m.value !== undefined && { value: m.value }) };
  const own = (text: string) => (projectDir ? text.replaceAll(`${projectDir}/`, "") : text);
  return {
    state: "error",
    message: own(m.error ?? "the handler failed"),
    ...(m.traceback == null ? {} : { traceback: own(m.traceback) }),
  };
}

/**
 * The `start` message of a session; `reuse`: its process may stay after it (reuse.ts).
 * @example toStartMessage(spec, "/data/builds/bld_1", false).type // "start"
 */
export function toStartMessage(s: SessionSpec, projectDir: string, reuse: boolean) {
  return {
    type: "start",
    session_id: s.sessionId,
    project_dir: projectDir,
    entry: s.entry,
    event: startEvent(s.event),
    env: s.env,
    durable: s.durable,
    pickle_values: s.pickleValues ?? s.durable,
    journal: s.journal,
    ...(s.printed && { printed: s.printed }),
    workflow_timeout: s.workflowTimeoutMs / 1000,
    ...(s.retry && { retry: s.retry }),
    ...(s.check && { check: true }),
    ...(reuse && { reuse: true }),
    ...(reuse && reuseMode(s) === "modules" && { fresh_modules: true }),
  };
}

/**
 * The event as the `start` message carries it: an event made by `start()` sends its data in the
 * SDK's wire form, marked `data_encoding: "sdk"` so the runner decodes it (event.py).
 */
function startEvent(e: HandlerEvent) {
  const { sdk_data, ...rest } = e;
  return sdk_data ? { ...rest, data: sdk_data, data_encoding: "sdk" } : rest;
}
