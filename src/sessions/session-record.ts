import type {
  EventRecord,
  JournalStep,
  ProjectDoc,
  SessionEnd,
  SessionRecord,
  SessionState,
  TriggerRecord,
} from "../model/records.ts";
import type { SessionSpec } from "../runtime/runtime.ts";
import type { SessionLog } from "./session-log.ts";

export interface StartInput {
  sessionId: string;
  doc: ProjectDoc;
  trigger: TriggerRecord;
  deploymentId: string;
  buildId: string;
  event: EventRecord;
  /** The session that started this one with `start()`. */
  parentId?: string;
  /** Started by hand: no trigger (see SessionRecord.manual). */
  manual?: boolean;
  memo?: Record<string, string>;
  /** A re-run from a step: the session it re-runs and its journal's first steps, replayed. */
  rerun?: { of: string; steps: JournalStep[] };
}

/**
 * The record of a session just created: `created`, no attempt yet.
 * @example const record = newSessionRecord(input, new Date().toISOString());
 */
export function newSessionRecord(input: StartInput, t: string): SessionRecord {
  return {
    id: input.sessionId,
    project_id: input.doc.project.id,
    project_name: input.doc.project.name,
    deployment_id: input.deploymentId,
    build_id: input.buildId,
    trigger_id: input.trigger.id,
    trigger_name: input.trigger.name,
    event_id: input.event.id,
    entry: input.trigger.call ?? "",
    durable: input.trigger.is_durable,
    ...(input.trigger.pickle_values && { pickle_values: true }),
    ...(input.trigger.reuse_process && !input.trigger.is_durable && { reuse_process: true }),
    is_sync: input.trigger.is_sync,
    state: "created",
    error: null,
    attempts: 0,
    created_at: t,
    started_at: null,
    ended_at: null,
    updated_at: t,
    ...(input.parentId ? { parent_id: input.parentId } : {}),
    ...(input.manual && { manual: true }),
    ...(input.memo && Object.keys(input.memo).length ? { memo: input.memo } : {}),
    ...(input.trigger.retry && { retry: input.trigger.retry }),
    ...(input.rerun && { rerun_of: input.rerun.of, rerun_from_step: input.rerun.steps.length }),
  };
}

/**
 * What the runtime is given to run one attempt of a session.
 * @example runtime.run(sessionSpec(record, event, env, journal.begin(), 10_000), build, host);
 */
export function sessionSpec(
  record: SessionRecord,
  event: EventRecord,
  env: Record<string, string>,
  journal: JournalStep[],
  workflowTimeoutMs: number,
  printed = 0,
): SessionSpec {
  return {
    sessionId: record.id,
    projectId: record.project_id,
    buildId: record.build_id,
    entry: record.entry,
    event: {
      event_id: event.id,
      session_id: record.id,
      event_type: event.event_type,
      data: event.data,
      ...(event.sdk_data ? { sdk_data: event.sdk_data } : {}),
      // A manual run's inputs are plain JSON, not a webhook's shape to decode.
      ...(record.manual && { data_encoding: "json" as const }),
    },
    env,
    durable: record.durable,
    pickleValues: record.durable || record.pickle_values === true,
    ...(record.reuse_process === true && !record.durable && { reuseProcess: true }),
    // The default for the rest of the non-durable sessions (docs/sessions.md, "Fresh modules").
    ...(record.reuse_process !== true && !record.durable && { freshModules: true }),
    ...(record.retry && { retry: record.retry }),
    ...(record.durable && printed > 0 && { printed }),
    ...(record.is_sync && { held: true }),
    journal,
    workflowTimeoutMs,
  };
}

/**
 * The state a run's end leaves a session in, the detail of its log line, and its error. A
 * process that died is "interrupted" (with why, unless the service was stopping anyway).
 * @example finalState({ state: "crashed", message: "killed" }, false, (t) => t) // error "interrupted: killed"
 */
export function finalState(
  end: SessionEnd,
  closing: boolean,
  redact: (text: string) => string,
): { state: "completed" | "stopped" | "error"; detail?: string; error?: SessionRecord["error"] } {
  if (end.state === "completed" || end.state === "stopped") return { state: end.state };
  if (end.state === "error") {
    const error = {
      message: redact(end.message),
      ...(end.traceback ? { traceback: redact(end.traceback) } : {}),
    };
    return { state: "error", detail: error.message, error };
  }
  const message = closing ? "interrupted" : `interrupted: ${end.message}`;
  return { state: "error", detail: message, error: { message } };
}

/** A session nobody runs any more, and how it ends (default: "interrupted"). */
export interface Abandoned {
  record: SessionRecord;
  log: SessionLog;
  end?: SessionEnd;
}

/** How a session nobody runs, and that cannot resume, ends. */
export const INTERRUPTED: SessionEnd = { state: "error", message: "interrupted" };

/**
 * How a synchronous session ends when the instance holding its request stopped before the
 * session got a process: its answer has nobody to go to, so it never runs.
 */
export const NEVER_STARTED: SessionEnd = {
  state: "error",
  message: "never started: the instance holding its request stopped before it did",
};

/** A session's new state at time `t`: on its record, and as an entry of its log. */
export function applyState(
  record: SessionRecord,
  log: SessionLog,
  t: string,
  state: SessionState,
  detail?: string,
): void {
  record.state = state;
  record.updated_at = t;
  if (state === "running" && !record.started_at) record.started_at = t;
  if (state === "completed" || state === "error" || state === "stopped") record.ended_at = t;
  log.append(detail ? { t, kind: "state", state, detail } : { t, kind: "state", state });
}
