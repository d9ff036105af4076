/** What a run of workflow code hands back to the service (src/runtime/runtime.ts). */

import type { AttemptInfo } from "./retry-records.ts";

export interface Outcome {
  status_code: number;
  headers: Record<string, string>;
  /** Raw body bytes, or null. */
  body: Buffer | null;
  more: boolean;
  /** `http_outcome(event_id=…)`: the event whose held request this answers (else the session's). */
  event_id?: string;
}

/** An activity that began running live: shown in flight until its report of the same `id`. */
export interface ActivityStart {
  /** Its number in its process, from 1. */
  id: number;
  function: string;
  /** How long it had run when told (the Python runner tells those still running at 50 ms). */
  running_ms?: number;
}

/** An activity in flight, as a running session's page shows it (not stored). */
export interface ActivityInFlight extends Omit<ActivityStart, "running_ms"> {
  /** When the service heard it start (ISO-8601). */
  t: string;
}

export interface ActivityReport {
  /** The `id` of its start, on the report that ends it (absent when no start was told). */
  id?: number;
  function: string;
  duration_ms: number;
  ok: boolean;
  error?: string;
  /** An attempt under a retry policy: its number, of how many, the wait before the next. */
  retry?: AttemptInfo;
}

export type SessionEnd =
  /** `value`: the handler's return value in the SDK's wire form, when it had one (Python). */
  | { state: "completed"; value?: unknown }
  | { state: "error"; message: string; traceback?: string }
  | { state: "stopped" }
  /** The process died without saying `done`: a durable session may be resumed. */
  | { state: "crashed"; message: string };

export interface BuildFiles {
  id: string;
  /** Relative path → base64 content. */
  files: Record<string, string>;
}
