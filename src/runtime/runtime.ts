import type {
  ActivityReport,
  BuildFiles,
  HandlerEvent,
  JournalStep,
  Outcome,
  SessionEnd,
} from "../model/records.ts";

/**
 * The seam between the service and whatever runs workflow code. The routes and the session
 * manager only see this; the Python process runtime (./python) implements it, and
 * route tests use an in-process fake.
 */

export interface SessionSpec {
  sessionId: string;
  projectId: string;
  buildId: string;
  /** `<relative/path.py>:<function>` */
  entry: string;
  event: HandlerEvent;
  /** Vars and decrypted secrets, set in `os.environ` before the module is imported. */
  env: Record<string, string>;
  durable: boolean;
  /** Steps already taken, for a resumed durable session (empty otherwise). */
  journal: JournalStep[];
  /** Longest stretch of workflow code outside activities before the session fails. */
  workflowTimeoutMs: number;
}

/** What a running session asks of the service. Implemented by the session manager. */
export interface SessionHost {
  /** The session's process has started (it may have waited for a slot until now). */
  started(): void;
  print(text: string, stream: "stdout" | "stderr"): void;
  activity(report: ActivityReport): void;
  outcome(outcome: Outcome): void;
  /** Resolves to a subscription id; rejects with a HooklineError whose message Python raises. */
  subscribe(name: string, filter: string): Promise<string>;
  /** The next event for any of the ids, or null once `timeoutMs` (null: no end) passes. */
  nextEvent(ids: string[], timeoutMs: number | null): Promise<HandlerEvent | null>;
  unsubscribe(id: string): Promise<void>;
  /**
   * A durable timer (`time.sleep` in a durable session), step `seq`: resolves when it fires.
   * A replay asking again for the same step keeps the first deadline.
   */
  sleep(seq: number, ms: number): Promise<void>;
  /** Durable sessions: resolves once the step is stored. */
  journal(step: JournalStep): Promise<void>;
}

export interface SessionRun {
  readonly done: Promise<SessionEnd>;
  /** Ask the session to stop; resolves when its process is gone. Idempotent. */
  stop(): Promise<void>;
}

export interface Runtime {
  /**
   * Check a build before it is deployed: every `.py` compiles, every call names a top-level
   * function of its file. Rejects with a HooklineError("unprocessable") carrying Python's message.
   * A project's `requirements.txt`, when the build has one, is installed here too. Lines about
   * slow steps (creating the Python environment) go to `onProgress`.
   */
  check(build: BuildFiles, calls: string[], onProgress?: (line: string) => void): Promise<void>;
  run(spec: SessionSpec, build: BuildFiles, host: SessionHost): SessionRun;
  dispose(): Promise<void>;
}
