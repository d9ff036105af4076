/**
 * Everything the web UI needs from the service, behind one small interface. The pages and the
 * live streams see only `UiData`; `service-adapter.ts` implements it once over what the
 * platform composes (stores, the session manager), so a change of the session core re-wires
 * that one file.
 */
import type {
  EventRecord,
  JournalStep,
  SessionLogEntry,
  SessionRecord,
  SessionState,
  TriggerRecord,
} from "../model/records.ts";
import type { SessionPage, SessionQuery } from "../storage/session-scan.ts";

export type { SessionPage, SessionQuery } from "../storage/session-scan.ts";
export type { EventRecord, SessionLogEntry, SessionRecord, SessionState, TriggerRecord };

export const SESSION_STATES: readonly SessionState[] = [
  "created",
  "running",
  "completed",
  "error",
  "stopped",
];

export const ENDED_STATES: ReadonlySet<SessionState> = new Set(["completed", "error", "stopped"]);

export interface ProjectSummary {
  id: string;
  name: string;
  active_deployment_id: string | null;
  triggers: number;
  updated_at: string;
}

/** A var as the UI may show it: a secret's value is never here, not even masked ciphertext. */
export interface VarView {
  name: string;
  secret: boolean;
  /** null for a secret */
  value: string | null;
  source: "manifest" | "cli";
}

/** A connection as the project page shows it: status in words and its inbound path. */
export interface ConnectionView {
  name: string;
  integration: string;
  /** `ready`, `needs pat_secret or webhook_secret, pat`, or `no inbound events (vars only)`. */
  status: string;
  ready: boolean;
  /** `/inbound/<id>`, or "" for integrations that deliver no events here. */
  inbound_path: string;
}

/** A trigger as the UI shows it: its record, and what it does now (`triggerState`, as the API). */
export interface TriggerView extends TriggerRecord {
  /** False for a connection trigger whose integration delivers no events here: it never fires. */
  active: boolean;
  /** A schedule's next firing (ISO-8601) while the project is deployed, else null. */
  next_fire: string | null;
}

export interface ProjectView {
  project: ProjectSummary;
  triggers: TriggerView[];
  vars: VarView[];
  /** Absent from adapters that predate connections. */
  connections?: ConnectionView[];
}

/** A journal step without its pickled payloads, and whether the latest run replayed it. */
export interface JournalView {
  seq: number;
  kind: JournalStep["kind"];
  what: string;
  ok: boolean;
  replayed: boolean;
}

export interface SessionDetail {
  record: SessionRecord;
  /** null when the event was pruned by retention. */
  event: EventRecord | null;
  log: SessionLogEntry[];
  journal: JournalView[];
}

/** What changes while a session is watched: a new log entry, or its end (final record). */
export type SessionChange =
  | { kind: "entry"; entry: SessionLogEntry; record: SessionRecord }
  | { kind: "end"; record: SessionRecord };

export interface TestRequest {
  /** The origin the UI was reached at: the request looks as if sent to the webhook URL. */
  origin: string;
  method: string;
  /** Extra path after the webhook id, e.g. "/sub/path?x=1" (may be ""). */
  suffix: string;
  headers: [string, string][];
  body: string;
}

export interface TestResponse {
  status: number;
  headers: [string, string][];
  body: string;
  /** The session the request started, if any. */
  session_id: string | null;
}

export interface UiData {
  /** Stops what the adapter does in the background (indexing stored sessions) and waits for it. */
  dispose?(): Promise<void>;
  listProjects(): Promise<ProjectSummary[]>;
  /** By id or name; null when there is none. */
  project(ref: string): Promise<ProjectView | null>;
  listSessions(query: SessionQuery): Promise<SessionPage>;
  session(id: string): Promise<SessionDetail | null>;
  /** Called with a session's record when one starts or changes state here. Returns unwatch. */
  watchSessions(onChange: (record: SessionRecord) => void): () => void;
  /**
   * Follows one session from log entry `from` on: the entries it has past `from` now, then new
   * ones as they come, then its end. Ended sessions get their remaining entries and the end at
   * once. Returns unwatch.
   */
  watchSession(id: string, from: number, onChange: (change: SessionChange) => void): () => void;
  stop(id: string): Promise<SessionRecord>;
  /** A new session from the same stored event, on the project's active deployment. */
  rerun(id: string): Promise<SessionRecord>;
  /** Sends a request to a trigger's webhook through the service itself. */
  testRequest(projectId: string, triggerName: string, req: TestRequest): Promise<TestResponse>;
}
