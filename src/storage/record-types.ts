import type { Storage } from "unstorage";
import type {
  BuildRecord,
  DeploymentRecord,
  EventRecord,
  JournalStep,
  ProjectDoc,
  SessionLogEntry,
  SessionRecord,
  SessionState,
  WebhookRef,
} from "../model/records.ts";
import type { OwnerWrite } from "./fence.ts";
import type { StoredJson } from "./stored-json.ts";

// What the code above storage relies on; `createStores` (./stores.ts) is the implementation.

export interface ListOptions {
  project_id?: string;
  state?: SessionState;
  limit?: number;
}

export interface ProjectStore {
  get(id: string): Promise<ProjectDoc | null>;
  byName(name: string): Promise<ProjectDoc | null>;
  /** Every project, in id order. */
  list(): Promise<ProjectDoc[]>;
  /** The commit point of a deploy or a var change. */
  put(doc: ProjectDoc): Promise<void>;
}

export interface WebhookStore {
  get(webhookId: string): Promise<WebhookRef | null>;
  put(webhookId: string, ref: WebhookRef): Promise<void>;
  delete(webhookId: string): Promise<void>;
}

export interface BuildStore {
  get(id: string): Promise<BuildRecord | null>;
  put(rec: BuildRecord): Promise<void>;
}

export interface DeploymentStore {
  get(id: string): Promise<DeploymentRecord | null>;
  put(rec: DeploymentRecord): Promise<void>;
  /** Newest first. */
  listByProject(projectId: string): Promise<DeploymentRecord[]>;
}

export interface EventStore {
  get(id: string): Promise<EventRecord | null>;
  put(rec: EventRecord): Promise<void>;
  keys(): Promise<string[]>;
  delete(id: string): Promise<void>;
  /** Newest first. */
  list(opts?: ListOptions): Promise<EventRecord[]>;
}

/** One entry of the session index: a session of a project, in a state. */
export interface IndexEntry {
  project_id: string;
  state: SessionState;
  id: string;
}

export interface SessionIndex {
  /** A project's sessions (in one state, if given), newest first; reads index keys only. */
  entries(projectId: string, state?: SessionState): Promise<IndexEntry[]>;
  /** How many sessions (of a project, in a state, when given): a key listing, no value read. */
  count(projectId?: string, state?: SessionState): Promise<number>;
  /**
   * Up to `limit` entries older than the session `before` (none: from the newest) and not
   * older than `since`, newest first, of a project or of all (and in a state, when given):
   * what one page of a session list shows. Reads index keys only: on LMDB, memory and
   * PostgreSQL one key range per project and state, bounded by the ids and stopped at `limit`
   * (src/storage/index-range.ts); on Redis and fs a project's keys listed whole.
   */
  page(opts: IndexPageOptions): Promise<IndexEntry[]>;
}

/** What `SessionIndex.page` reads. */
export interface IndexPageOptions {
  projectId?: string;
  state?: SessionState;
  /** A session id: only entries below it (the cursor). */
  before?: string;
  /** An id (`idAt("ses", ms)`): only entries at or above it (a time range's start). */
  since?: string;
  limit: number;
}

/**
 * Writes of one session that commit together (see `SessionStore.commit`). `was` is the state
 * of the record in storage: null when there is none yet, undefined when not known.
 */
export interface SessionChange {
  record?: SessionRecord;
  was?: SessionState | null;
  log?: SessionLogEntry[];
  steps?: JournalStep[];
  /** The event that starts the session, stored with its first record (first in the batch). */
  event?: EventRecord;
  /**
   * The record's and the event's JSON text, where the caller made it already (to send it on):
   * stored as it is, the same text their objects would be stored as.
   */
  texts?: { record?: StoredJson<SessionRecord>; event?: StoredJson<EventRecord> };
  /**
   * Who may write the session, for a store that decides it (a fleet's PostgreSQL refuses a
   * stale owner or epoch with `Fenced`, and makes or removes the owner row in the same
   * statement); stores of one instance ignore it.
   */
  own?: OwnerWrite;
}

export interface SessionStore {
  get(id: string): Promise<SessionRecord | null>;
  /** A session with everything kept of it, in one commit: record, index entry, log, journal. */
  delete(id: string, projectId: string, state?: SessionState): Promise<void>;
  /** The record and its index entry, in one commit (`was`: see SessionChange). */
  put(rec: SessionRecord, was?: SessionState | null): Promise<void>;
  /**
   * The session's event (with its first record), journal steps, the log and the record with
   * its index entry, in one atomic batch (all or nothing on lmdb, memory and redis; in that
   * order, one after the other, on fs-lite).
   */
  commit(id: string, change: SessionChange): Promise<void>;
  /**
   * Changes of several sessions in one atomic batch, as `commit` writes each (recovery's
   * interrupted sessions). The caller bounds how many go in one.
   */
  commitMany(changes: { id: string; change: SessionChange }[]): Promise<void>;
  /** Newest first; with a project, reads only the index range it lists and the records returned. */
  list(opts?: ListOptions): Promise<SessionRecord[]>;
}

export interface LogStore {
  get(sessionId: string): Promise<SessionLogEntry[]>;
  put(sessionId: string, entries: SessionLogEntry[]): Promise<void>;
}

export interface JournalStore {
  /** Steps in order. */
  list(sessionId: string): Promise<JournalStep[]>;
  /** Stores one step, with its value's parts when it is kept apart (`parts`). */
  append(sessionId: string, step: JournalStep): Promise<void>;
  /** The stored parts of step `seq`'s value kept apart, in order; fewer when some are missing. */
  parts(sessionId: string, seq: number, count: number): Promise<string[]>;
  clear(sessionId: string): Promise<void>;
}

/** Typed stores over one unstorage `Storage`, each in its own key namespace. */
export interface Stores {
  /** The storage underneath (tests clear it; the platform disposes of it through `dispose`). */
  storage: Storage;
  projects: ProjectStore;
  webhooks: WebhookStore;
  builds: BuildStore;
  deployments: DeploymentStore;
  events: EventStore;
  sessionIndex: SessionIndex;
  sessions: SessionStore;
  logs: LogStore;
  journals: JournalStore;
  dispose(): Promise<void>;
}
