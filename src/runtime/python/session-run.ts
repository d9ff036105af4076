import { HooklineError } from "../../errors.ts";
import type { BuildFiles, SessionEnd } from "../../model/records.ts";
import type { SessionHost, SessionRun, SessionSpec } from "../runtime.ts";
import { describeExit, type ProcessLimits } from "./exits.ts";
import type { ForkServer } from "./fork-server.ts";
import { type ReusedProcess, type ReusePool, reuseMode } from "./reuse.ts";
import { SessionSocket } from "./session-socket.ts";
import type { Slots } from "./slots.ts";
import type { WarmDeployments } from "./warm.ts";

/** What a session's run needs of the Python runtime (src/runtime/python/runtime.ts). */
export interface RuntimeParts {
  /**
   * Whether the runtime is shut down: a session then ends `stopped` at once, as the runs it had
   * did (the service stopping: one that never got a process is left for the next start).
   */
  disposed: () => boolean;
  /** Sessions running at once, and waiting. */
  slots: Slots;
  /** The build's folder, installed here, and the cold fork server. */
  ready: (build: BuildFiles) => Promise<[string, ForkServer]>;
  /** The deployments' warm fork servers. */
  warm: WarmDeployments;
  /** Idle processes of triggers with `reuse_process: true`. */
  reuse: ReusePool;
  /** The Python executable sessions run on. */
  python: () => Promise<string>;
  limits: ProcessLimits;
  stopGraceMs?: number;
}

/**
 * One session on a Python process: a slot, the build installed, then its attempts; `stop`
 * aborts wherever it is (waiting for a slot, installing, running) and ends it `stopped`.
 * @example const run = runSession(parts, spec, build, host); const end = await run.done;
 */
export function runSession(
  parts: RuntimeParts,
  spec: SessionSpec,
  build: BuildFiles,
  host: SessionHost,
): SessionRun {
  const abort = new AbortController();
  let current: SessionSocket | null = null;
  const done = (async (): Promise<SessionEnd> => {
    if (parts.disposed()) return { state: "stopped" };
    let release: (() => void) | null = null;
    try {
      release = await parts.slots.acquire(abort.signal, spec.held === true);
      const [dir, cold] = await parts.ready(build);
      if (abort.signal.aborted) return { state: "stopped" };
      const onSocket = (s: SessionSocket) => {
        current = s;
      };
      return await attempts(parts, { spec, dir, host, cold, signal: abort.signal, onSocket });
    } catch (e) {
      if (abort.signal.aborted || parts.disposed()) return { state: "stopped" };
      return { state: "error", message: e instanceof Error ? e.message : String(e) };
    } finally {
      release?.();
    }
  })();
  const session: SessionRun = {
    done,
    async stop() {
      abort.abort(new HooklineError("unavailable", "stopped"));
      await current?.stop();
      await done;
    },
  };
  return session;
}

/** Tries after the first, for a process that died with its server before it said a word. */
const MAX_RETRIES = 4;
/** The pause before the first retry; it doubles at each (100, 200, 400, 800 ms). */
const RETRY_PAUSE_MS = 100;

/** One session's attempts: the session, and where it runs. */
interface Attempt {
  spec: SessionSpec;
  dir: string;
  host: SessionHost;
  /** The cold fork server: never forgotten (it restarts itself at the next connection). */
  cold: ForkServer;
  /** Aborted by `stop`. */
  signal: AbortSignal;
  /** Told of each attempt's socket, so that `stop` reaches the current one. */
  onSocket: (socket: SessionSocket) => void;
}

/**
 * Runs the session on a process, and again on a new one (up to five attempts) when the process
 * died with its server before it said a word: the session never began there.
 */
async function attempts(parts: RuntimeParts, a: Attempt): Promise<SessionEnd> {
  for (let attempt = 0; ; attempt++) {
    const proc = await connect(parts, a);
    const { socket, from, reused } = proc;
    if (a.signal.aborted) {
      socket.destroy(); // the child sees EOF before `start` and exits
      return { state: "stopped" };
    }
    let reported = false;
    const run = new SessionSocket(socket, a.spec, a.dir, a.host, {
      stopGraceMs: parts.stopGraceMs,
      announceStart: attempt === 0,
      greeted: reused?.pid,
      reuse: parts.reuse.staysAfter(a.spec, reused),
      // The socket's close may come just before the server's report of the exit.
      exitEnd: async (pid) => {
        const exit = await from.exitOf(pid, 1000);
        reported = exit !== null;
        return exit && describeExit(pid, exit, parts.limits);
      },
    });
    a.onSocket(run);
    const end = await run.done;
    handBack(parts, a, run, proc);
    // A process made ahead that died with its server (a warm server killed, say) before it
    // said a word: no server reported its exit, and the session never began, so it begins
    // again on a live server (the next process made ahead may be a spare of the same dead
    // server: a few tries). A process that dies by itself is reported by its server.
    const diedWithServer = end.state === "crashed" && !run.heard && !reported;
    if (!diedWithServer || attempt >= MAX_RETRIES || a.signal.aborted) {
      parts.reuse.ran(a.spec, reused); // the attempt the session ended on: counted once
      return end;
    }
    if (from !== a.cold) parts.warm.forget(from);
    // On a busy machine the dead server's exit can be seen late, and a connection made ahead in
    // the meantime may reach one of its dying spares: give its end time to be seen.
    await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS * 2 ** attempt));
  }
}

/**
 * After a session: a process that stays for another goes back to the pool (reuse.ts); any
 * other is done with (one that said more after its `done` still holds its socket open). A
 * fresh-modules process the cold server forked while the deployment has a warm server ends
 * too: the next sessions come from the warm one, whose children share its imported modules
 * where this one holds its own copy.
 */
function handBack(
  parts: RuntimeParts,
  { spec, cold }: Attempt,
  run: SessionSocket,
  p: Awaited<ReturnType<typeof connect>>,
): void {
  if (run.slowImport) parts.reuse.slowImport(spec);
  const coldCopy = p.from === cold && reuseMode(spec) === "modules" && parts.warm.has(spec);
  if (!run.reusable || coldCopy) {
    p.socket.destroy();
    return;
  }
  const sessions = (p.reused?.sessions ?? 0) + 1;
  parts.reuse.give(spec, { socket: p.socket, pid: run.pid!, from: p.from, sessions });
}

/**
 * An idle process that ran this deployment's sessions (reuse.ts), else a child of the
 * deployment's warm server when it is ready, else of the cold server.
 */
async function connect(
  parts: RuntimeParts,
  a: Attempt,
): Promise<{ socket: ReusedProcess["socket"]; from: ForkServer; reused: ReusedProcess | null }> {
  const reused = parts.reuse.take(a.spec);
  if (reused) return { socket: reused.socket, from: reused.from, reused };
  const hot = parts.warm.serverFor(await parts.python(), a.spec, a.dir);
  if (hot) {
    try {
      return { socket: await hot.connect(), from: hot, reused: null };
    } catch {
      parts.warm.forget(hot); // it died: this session runs cold, the next starts a new one
    }
  }
  return { socket: await a.cold.connect(), from: a.cold, reused: null };
}
