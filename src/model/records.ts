/** The records the service keeps. Times are ISO-8601 strings; ids carry their prefix. */

import type { ActivityStep, AttemptInfo, RetryPolicy, SessionRetry } from "./retry-records.ts";

export interface ProjectRecord {
  id: string;
  name: string;
  /** The manifest's `project.display_name`, a name for people; absent when not given. */
  display_name?: string;
  /**
   * The `version:` of the manifest deployed last: a manual run (no trigger to ask) pickles its
   * activity values under `v2`, as the triggers of that manifest do. Absent before it was kept.
   */
  manifest_version?: "v1" | "v2";
  env_id: string;
  active_deployment_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface EnvRecord {
  id: string;
  project_id: string;
  name: "default";
  created_at: string;
}

/** A var of an environment. A secret's `value` is ciphertext (see src/secrets.ts). */
export interface VarRecord {
  env_id: string;
  name: string;
  value: string;
  secret: boolean;
  /** The manifest's `description:` of the var (absent when none); `cli var set` keeps it. */
  description?: string;
  /** `manifest` vars follow the manifest on redeploy; `cli` vars survive it. */
  source: "manifest" | "cli";
  updated_at: string;
}

/**
 * A connection of a project (manifest `connections:`). Its vars are the env's vars named
 * `<name>__<var>`. Event sources (github, slack, http) get an inbound id: their providers post
 * to `/inbound/<inbound_id>`, kept across redeploys like a webhook id.
 */
export interface ConnectionRecord {
  /** `con_…`; sessions see it as `<name>__connection_id`. */
  id: string;
  name: string;
  integration: string;
  /** "" for integrations that deliver no events here. */
  inbound_id: string;
  created_at: string;
  updated_at: string;
}

export interface TriggerRecord {
  id: string;
  project_id: string;
  name: string;
  /** A `connection` trigger fires on its connection's verified events (github, slack, http). */
  type: "webhook" | "schedule" | "connection";
  /** "" for triggers that are not webhooks (no URL reaches them). */
  webhook_id: string;
  /** `schedule` triggers: the cron text or descriptor, and its IANA timezone. */
  schedule?: string;
  timezone?: string;
  /** `connection` triggers: the connection's name in the manifest. */
  connection?: string;
  /** Lower-case HTTP method, or "" for every method. */
  event_type: string;
  /** `<relative/path.py>:<function>`, or null for a call-less trigger (a subscription source). */
  call: string | null;
  is_sync: boolean;
  is_durable: boolean;
  /**
   * Activity values go through pickle even when not durable (a `version: v2` manifest: the
   * spec's errors table). Absent: `version: v1`, AutoKitteh's rule (as they are, non-durable).
   */
  pickle_values?: boolean;
  /** Non-durable only: a session may run in a process an earlier one left (docs/sessions.md). */
  reuse_process?: boolean;
  /** CEL expression over `data` and `event_type`, or "" for none. */
  filter: string;
  /** A header that names a delivery (`X-GitHub-Delivery`); repeats are answered once. "" or absent: none. */
  dedup_header?: string;
  /** The manifest's `retry:`: the policy of its sessions' activities that have none of their own. */
  retry?: RetryPolicy;
  created_at: string;
  updated_at: string;
}

export interface BuildRecord {
  id: string;
  project_id: string;
  /** Relative path → base64 content. */
  files: Record<string, string>;
  size: number;
  created_at: string;
}

export interface DeploymentRecord {
  id: string;
  project_id: string;
  build_id: string;
  state: "active" | "inactive";
  created_at: string;
  updated_at: string;
}

/** What a webhook event carries to the handler as `event.data`. Body bytes travel as base64. */
export interface WebhookData {
  method: string;
  raw_url: string;
  url: { path: string; query: Record<string, string>; path_suffix: string };
  headers: Record<string, string>;
  body: {
    /** base64 of the raw body */
    bytes: string;
    text: string | null;
    json: unknown;
    form: Record<string, string> | null;
  };
}

/** What a schedule firing carries as `event.data` (see docs/manifest.md, "Schedules"). */
export interface ScheduleData {
  /** The trigger's `schedule:` text. */
  schedule: string;
  timezone: string;
  /** The slot this firing is for, ISO-8601. */
  due: string;
  /** When the service fired it, ISO-8601 (later than `due` after downtime). */
  fired: string;
  /** Slots that passed while the service was down, folded into this one firing. */
  missed: number;
}

/** What a connection's event carries as `event.data`: the provider's payload, normalized. */
export type ConnectionData = Record<string, unknown>;

export interface EventRecord {
  id: string;
  project_id: string;
  trigger_id: string;
  trigger_name: string;
  /** "" for an event of a schedule; a connection's inbound id for its events. */
  webhook_id: string;
  /** The connection whose verified inbound request made this event (then `trigger_id` may be ""). */
  connection?: string;
  event_type: string;
  /** A connection's events carry their provider's payload (docs/connections.md). */
  data: WebhookData | ScheduleData | ConnectionData;
  /**
   * An event made by `start()` (event_type "start"): the new session's `event.data` in the SDK's
   * wire form; `data` is then an empty webhook shape.
   */
  sdk_data?: Record<string, unknown>;
  session_id: string | null;
  created_at: string;
}

export type SessionState = "created" | "running" | "completed" | "error" | "stopped";

export interface SessionRecord extends SessionRetry {
  id: string;
  project_id: string;
  project_name: string;
  deployment_id: string;
  build_id: string;
  trigger_id: string;
  trigger_name: string;
  event_id: string;
  entry: string;
  durable: boolean;
  /** Activity values pickled in a non-durable session too (its trigger's `pickle_values`). */
  pickle_values?: boolean;
  /** Its trigger's `reuse_process`: it may have run in a process an earlier session left. */
  reuse_process?: boolean;
  is_sync: boolean;
  state: SessionState;
  error: { message: string; traceback?: string } | null;
  /** How many times a durable session was resumed after its process died. */
  attempts: number;
  /** Journal steps the latest run of a durable session replayed instead of running. */
  replayed_steps?: number;
  /** A durable timer (`time.sleep`) that is running: its step and when it fires (epoch ms). */
  timer?: { seq: number; until: number } | null;
  /** The session's return value, set by `outcome(value)` (the last call wins), wire form. */
  outcome_value?: unknown;
  /** The session that started this one with `start()`. */
  parent_id?: string;
  /**
   * Started by hand (`cli session start`, `POST /projects/{project}/sessions`, the UI's Run
   * form): no trigger (`trigger_id` and `trigger_name` are ""), its event's `data` the inputs.
   */
  manual?: boolean;
  /** `start(…, memo=…)`: strings kept with the session, for people reading it. */
  memo?: Record<string, string>;
  /** W3C traceparent of the session's span, when tracing is on (docs/observability.md). */
  traceparent?: string;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  updated_at: string;
}

/** One line of a session's log, in order (a print's `outside`: an activity's or a child's). */
export type SessionLogEntry =
  | { t: string; kind: "print"; text: string; stream: "stdout" | "stderr"; outside?: true }
  | { t: string; kind: "state"; state: SessionState; detail?: string }
  | {
      t: string;
      kind: "activity";
      function: string;
      duration_ms: number;
      ok: boolean;
      error?: string;
      replayed?: boolean;
      /** An attempt under a retry policy (docs/sessions.md, "Retries"). */
      retry?: AttemptInfo;
    }
  | {
      t: string;
      kind: "outcome";
      status_code: number;
      headers: Record<string, string>;
      /** base64 of the body, or null */
      body: string | null;
      more: boolean;
      sent: boolean;
    }
  | { t: string; kind: "warning"; text: string }
  | { t: string; kind: "subscribe"; subscription_id: string; source: string; filter: string }
  | { t: string; kind: "event"; subscription_id: string | null; event_id: string | null };

/** A request the service refused: replay raises the same error again. */
interface Refused {
  /** Python exception type, e.g. "ValueError" */
  error?: string;
  message?: string;
}

/** One step of a durable session's journal. Pickled values are base64. */
export type JournalStep =
  | ActivityStep
  | ({ seq: number; kind: "subscribe"; name: string; filter: string; value?: string } & Refused)
  | ({ seq: number; kind: "next_event"; value?: unknown | null } & Refused)
  | ({ seq: number; kind: "unsubscribe"; id: string } & Refused)
  | ({ seq: number; kind: "sleep" } & Refused)
  | { seq: number; kind: "outcome" }
  /** The SDK's requests answered by the service: the reply's value (wire form), or its error. */
  | ({ seq: number; kind: SdkRequestKind; value?: unknown } & Refused);

/** Requests of the AutoKitteh SDK surface that the service answers and durable sessions journal. */
export type SdkRequestKind =
  | "store"
  | "start_session"
  | "signal"
  | "next_signal"
  | "outcome_value"
  | "webhook_url"
  | ("encode_jwt" | "refresh_oauth"); // never journaled: the host answers them at once

/**
 * A project's whole configuration in one document, so that a deploy commits with one write:
 * either every change of the manifest is in place or none is.
 */
export interface ProjectDoc {
  project: ProjectRecord;
  env: EnvRecord;
  triggers: TriggerRecord[];
  vars: VarRecord[];
  /** Absent in documents written before connections were kept. */
  connections?: ConnectionRecord[];
}

export interface WebhookRef {
  project_id: string;
  /** "" for a connection's inbound id. */
  trigger_id: string;
  /** Set for a connection's inbound id: the connection's name (no trigger answers it). */
  connection?: string;
}

/** The event as the handler sees it (`workflow_sdk.Event`). */
export interface HandlerEvent {
  event_id: string;
  session_id: string | null;
  event_type: string;
  data: EventRecord["data"];
  /** See EventRecord.sdk_data: the handler gets it as `event.data` instead. */
  sdk_data?: Record<string, unknown>;
  /** `json`: `data` is plain JSON (a manual run's inputs), handed over as it is. */
  data_encoding?: "json";
}

export type { ActivityStep, AttemptInfo, RetryPolicy, SessionRetry } from "./retry-records.ts";
// What a run of workflow code hands back (src/runtime): kept in a file of their own.
export type { ActivityReport, BuildFiles, Outcome, SessionEnd } from "./run-records.ts";
