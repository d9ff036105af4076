import type {
  ActivityReport,
  BuildFiles,
  HandlerEvent,
  JournalStep,
  Outcome,
  RetryPolicy,
  SdkRequestKind,
  SessionEnd,
} from "../model/records.ts";
import type { ActivityStart } from "../model/run-records.ts";

/**
 * The seam between the service and whatever runs workflow code. The routes and the sessions
 * only see this; the Python process runtime (./python) implements it, and route tests use an
 * in-process fake. A runtime translates messages to and from its process, nothing more: the
 * service numbers a session's steps, journals them (durable sessions) and answers replays.
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
  /**
   * Activity arguments and results go through pickle, and one that cannot fails the session:
   * durable sessions, and every session of a `version: v2` manifest. Absent: as `durable`.
   */
  pickleValues?: boolean;
  /**
   * Steps already taken, for a resumed durable session (empty otherwise), contiguous from seq 0.
   * A runtime that replays in its process (the Python one) hands them over at start; steps it
   * sends to `SessionHost.step` inside this range are answered from them instead.
   */
  journal: JournalStep[];
  /**
   * Prints a resumed durable session's earlier runs logged: its new run prints none of its first
   * this many again (a print after the last journaled step ran live before; absent: 0).
   */
  printed?: number;
  /** Longest stretch of workflow code outside activities before the session fails. */
  workflowTimeoutMs: number;
  /**
   * The trigger's `reuse_process`: a non-durable session may run in a process that ran an
   * earlier session of its deployment, module state kept (docs/sessions.md). Absent: a fresh one.
   */
  reuseProcess?: boolean;
  /** The trigger's retry policy, for activities without their own (absent: none). */
  retry?: RetryPolicy;
  /**
   * A replay check: every step goes to the host, nothing runs for real (no activity, no
   * network), and the host ends the run once it reaches a step past the journal.
   */
  check?: boolean;
  /**
   * A non-durable session may run in a process that ran an earlier session of its deployment,
   * the project's modules imported anew for it (the default for non-durable triggers; a
   * runtime may still give it a process of its own). Absent: a fresh one.
   */
  freshModules?: boolean;
  /**
   * A request is held open for this session's outcome (a synchronous webhook): it is given a
   * process before sessions nobody waits for.
   */
  held?: boolean;
}

/**
 * A workflow step that goes through the service. `seq` is the runtime's own step number when it
 * keeps one (the service checks it against its own count), else the service numbers the step.
 */
export type StepRequest =
  | { kind: "subscribe"; seq?: number; name: string; filter: string }
  | { kind: "next_event"; seq?: number; ids: string[]; timeoutMs: number | null }
  | { kind: "unsubscribe"; seq?: number; id: string }
  /** A durable timer (`time.sleep` in a durable session): answered when it fires. */
  | { kind: "sleep"; seq?: number; ms: number }
  /** An HTTP outcome; nobody waits for its answer. */
  | { kind: "outcome"; seq?: number; outcome: Outcome }
  /**
   * A live activity of a durable session finished: answered once it is on record. With neither
   * `result` nor `error`, a replay asks for its record (`args`: a replay check's digest).
   */
  | {
      kind: "activity";
      seq?: number;
      function: string;
      result?: string;
      error?: string;
      args?: string;
      attempts?: number;
      /** A value too big for one message, in parts (python/parts.ts). */
      apart?: { field: "result" | "error"; parts: number; bytes: number };
      parts?: string[];
    }
  /**
   * Attempt `attempt` of durable activity step `seq` failed with `error` (pickled) and its retry
   * policy tries again after `ms`: recorded pending, answered once that time has passed.
   */
  | { kind: "retry"; seq: number; function: string; attempt: number; ms: number; error: string }
  /**
   * A request of the SDK's AutoKitteh surface (store, start_session, signal, next_signal,
   * outcome_value, webhook_url): its fields as the workflow sent them, values in the SDK's wire
   * form (python-runtime/workflow_sdk/values.py).
   */
  | { kind: SdkRequestKind; seq?: number; fields: Record<string, unknown> };

/**
 * The answer to a step. A refused step carries the name of the error the workflow raises
 * (the session core's one table says which: src/sessions/python-errors.ts) and its message.
 */
export type StepReply =
  /** `parts`: a replayed activity's value kept apart, sent before the reply. */
  { ok: true; value: unknown; parts?: string[] } | { ok: false; error: string; message: string };

/** What a running session asks of the service. Implemented by src/sessions. */
export interface SessionHost {
  /**
   * The session's process is ready (it may have waited for a slot until now). When this
   * returns a promise, the process is told to begin only once it resolves (the session's
   * `running` state is on record first).
   */
  started(): Promise<void> | undefined;
  /** `outside`: not the workflow code's (an activity's, a child process's). */
  print(text: string, stream: "stdout" | "stderr", outside?: true): void;
  /** An activity began running live: in flight (not stored) until its report. Optional. */
  activityStarted?(start: ActivityStart): void;
  /** An activity ran (any session): a log line. A durable one also sends an `activity` step. */
  activity(report: ActivityReport): void;
  /**
   * Serves one step, records it (durable sessions) and resolves with the reply once it is on
   * record. Rejects when the session cannot go on (a step that could not be stored, a step
   * that contradicts the journal, a repeated seq): the runtime then ends the session in
   * `error` with the rejection's message.
   */
  step(request: StepRequest): Promise<StepReply>;
}

export interface SessionRun {
  readonly done: Promise<SessionEnd>;
  /** Ask the session to stop; resolves when its process is gone. Idempotent. */
  stop(): Promise<void>;
}

/**
 * A deployment to get ready before its first session: its build, its vars (secrets opened) and
 * the entries (`<file.py>:<function>`) its triggers call.
 */
export interface PrepareSpec {
  projectId: string;
  build: BuildFiles;
  env: Record<string, string>;
  entries: string[];
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
  /**
   * Optional: gets what every session needs ready (the Python environment) so the first one
   * does not build it. Rejects when it cannot; a later call tries again.
   */
  prepareEnvironment?(): Promise<void>;
  /**
   * Optional: gets a deployment ready for its sessions (its files in place, its requirements
   * installed here, a process that has imported its code). Rejects when it cannot; its sessions
   * then report the cause themselves.
   */
  prepare?(deployment: PrepareSpec): Promise<void>;
  /**
   * Optional: how long a session started now would wait for a process, ms, as estimated from
   * the recent pace (`held`: one whose request is held, which goes first). Absent: no wait.
   */
  expectedWaitMs?(held: boolean): number;
  dispose(): Promise<void>;
}

/** What the runtime counts for `/metrics`, read at scrape time (src/observe/scraped-metrics.ts). */
export interface RuntimeGauges {
  running: number;
  waiting: number;
  maxRunning: number;
  maxWaiting: number;
  warmServers: number;
  spareProcesses: number;
  /** Processes of `reuse_process` triggers idle between sessions (docs/sessions.md). */
  idleReusedProcesses: number;
  /** Sessions of `reuse_process` triggers so far, by the process they ran on. */
  reuseSessions: { reused: number; fresh: number };
}
