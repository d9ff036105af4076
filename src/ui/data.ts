/**
 * Everything the web UI needs from the service, behind one small interface. The pages and the
 * live streams see only `UiData`; `service-adapter.ts` implements it once over what the
 * platform composes (stores, the session manager), so a change of the session core re-wires
 * that one file.
 */
import type {
  EventRecord,
  SessionLogEntry,
  SessionRecord,
  SessionState,
  TriggerRecord,
} from "../model/records.ts";
import type { ActivityInFlight } from "../model/run-records.ts";
import type { RerunFrom } from "../routes/api/rerun.ts";
import type { ManualRunFields } from "../sessions/manual.ts";
import type { Overview, Range } from "../stats/overview.ts";
import type { SessionPage, SessionQuery } from "../storage/session-scan.ts";
import type { JournalView } from "../wire/journal-view.ts";
import type { ReplayReport } from "../wire/replay-report.ts";
import type { AboutView } from "./about.ts";

export type { Overview, Range } from "../stats/overview.ts";
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
  /** The manifest's `project.display_name`, when it has one. */
  display_name?: string;
  active_deployment_id: string | null;
  triggers: number;
  updated_at: string;
}

/** A var as the UI may show it: a secret's value is never here, not even masked ciphertext. */
export interface VarRow {
  name: string;
  secret: boolean;
  /** null for a secret */
  value: string | null;
  source: "manifest" | "cli";
  /** The manifest's description of the var, "" when none. */
  description: string;
}

/** A connection as the project page shows it: status in words and its inbound path. */
export interface ConnectionRow {
  /** `con_…`. */
  id?: string;
  name: string;
  /** Its authorize button's text ("Authorize with Google", "Install the GitHub App"), or "". */
  authorize?: string;
  integration: string;
  /** `ready`, `needs pat_secret or webhook_secret, pat`, or `no inbound events (vars only)`. */
  status: string;
  ready: boolean;
  /** `/inbound/<id>`, or "" for integrations that deliver no events here. */
  inbound_path: string;
  /** An OAuth connection with no OAuth app configured: what to set (names, never values). */
  oauth_missing?: OAuthMissing;
}

/** What an OAuth connection lacks to be authorized: the service's app, or its own. */
export interface OAuthMissing {
  /** "Google". */
  provider: string;
  /** The service's environment names: `GOOGLE_CLIENT_ID`, `GOOGLE_CLIENT_SECRET`. */
  env: [string, string];
  /** `<project>/<connection>`, as `cli var set --connection` takes it. */
  connection: string;
}

/** A trigger as the UI shows it: its record, and what it does now (`triggerState`, as the API). */
export interface TriggerRow extends TriggerRecord {
  /** False for a connection trigger whose integration delivers no events here: it never fires. */
  active: boolean;
  /** A schedule's next firing (ISO-8601) while the project is deployed, else null. */
  next_fire: string | null;
}

export interface ProjectView {
  project: ProjectSummary;
  triggers: TriggerRow[];
  vars: VarRow[];
  /** Absent from adapters that predate connections. */
  connections?: ConnectionRow[];
  /**
   * The active deployment's entry points per file (functions a trigger calls, or whose first
   * parameter takes an event): what the Run form offers.
   */
  entry_points?: { file: string; functions: string[] }[];
  /** Its other top-level functions, listed apart: helpers and activities (`file.py:name`). */
  not_entry_points?: { loc: string; kind: "helper" | "activity" }[];
}

/** A journal step as the API answers it and the UI shows it (one definition, src/wire/). */
export type { JournalView } from "../wire/journal-view.ts";

export interface SessionDetail {
  record: SessionRecord;
  /** null when the event was pruned by retention. */
  event: EventRecord | null;
  log: SessionLogEntry[];
  journal: JournalView[];
  /** The earlier session of the same event this one re-runs, when found. */
  rerunOf?: string | null;
  /** Later sessions of the same event: its re-runs, oldest first. */
  reruns?: { id: string; state: SessionState }[];
  /** Activities running now in a session running here (never stored): rows in flight. */
  inFlight?: ActivityInFlight[];
}

/**
 * What a watcher of one session is told: a new log entry, or its end (final record). Not
 * storage's `SessionChange` (the writes of one commit), hence the name.
 */
export type WatchedSessionChange =
  /** `ended`: activities told as started that are no longer in flight (this entry ends one). */
  | { kind: "entry"; entry: SessionLogEntry; record: SessionRecord; ended?: number[] }
  /** An activity began running: its row in flight until the entry that ends it. */
  | { kind: "started"; activity: ActivityInFlight; record: SessionRecord }
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
  /** The overview's figures over a range, from the counters kept as sessions end. */
  overview(range: Range): Promise<Overview>;
  listSessions(query: SessionQuery): Promise<SessionPage>;
  /** Sessions created (not yet started) and running now, of a project or all: the index's count. */
  liveCounts(projectId?: string): Promise<{ created: number; running: number }>;
  session(id: string): Promise<SessionDetail | null>;
  /** Called with a session's record when one starts or changes state here. Returns unwatch. */
  watchSessions(onChange: (record: SessionRecord) => void): () => void;
  /**
   * Follows one session from log entry `from` on: the entries it has past `from` now, then new
   * ones as they come, then its end. Ended sessions get their remaining entries and the end at
   * once. Returns unwatch.
   */
  watchSession(
    id: string,
    from: number,
    onChange: (change: WatchedSessionChange) => void,
  ): () => void;
  stop(id: string): Promise<SessionRecord>;
  /**
   * A new session from the same stored event, on the project's active deployment; `from`: a
   * durable one's journal reused up to its failed step (or step N).
   */
  rerun(id: string, from?: RerunFrom): Promise<SessionRecord>;
  /** The latest replay check of a project's deploys (`cli deploy --check-replay`), or null. */
  replayReport(projectId: string): Promise<ReplayReport | null>;
  /**
   * Where the connection `cid` belongs, and what it lacks to start an OAuth authorization
   * (null: nothing, go on to the provider); throws not_found for an unknown one.
   */
  authorizeCheck(cid: string): Promise<{ projectId: string; missing: OAuthMissing | null }>;
  /** The settings page's facts (read-only; names of variables, never values). */
  about(): Promise<AboutView>;
  /** A session started by hand (the Run form): an entry point of the active deployment. */
  run(projectId: string, fields: ManualRunFields): Promise<SessionRecord>;
  /** Sends a request to a trigger's webhook through the service itself. */
  testRequest(projectId: string, triggerName: string, req: TestRequest): Promise<TestResponse>;
}
