import { constants } from "node:os";
import type { SessionPriority } from "../../config.ts";
import type { SessionEnd } from "../../model/records.ts";

/**
 * How one of the server's children ended, as the server reported it on reaping it; `limit`
 * when the kernel killed it at its cgroup's memory limit (the OOM killer).
 */
export type ChildExit = { code: number } | { signal: number; limit?: "memory" };

/** Per-session resource limits of Python processes; 0 means none. See docs/limits.md. */
export interface ProcessLimits {
  /** Memory, MiB: a memory cgroup where one can be made, else address space (RLIMIT_AS). */
  memoryMib: number;
  /** Open file descriptors (RLIMIT_NOFILE). */
  files: number;
  /** CPU seconds (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later). */
  cpuSeconds: number;
  /** Processes and threads of a session (a pids cgroup where one is writable). */
  processes: number;
  /** CPU priority of the session processes and their fork server; `low` when unset. */
  priority?: SessionPriority;
}

export const NO_LIMITS: ProcessLimits = { memoryMib: 0, files: 0, cpuSeconds: 0, processes: 0 };

/**
 * The fork server's `serve` arguments for these limits.
 * @example limitArgs({ ...NO_LIMITS, files: 256 }) // ["--files", "256"]
 */
export function limitArgs(limits: ProcessLimits): string[] {
  const args: string[] = [];
  if (limits.memoryMib) args.push("--memory-mib", String(limits.memoryMib));
  if (limits.files) args.push("--files", String(limits.files));
  if (limits.cpuSeconds) args.push("--cpu-seconds", String(limits.cpuSeconds));
  if (limits.processes) args.push("--processes", String(limits.processes));
  if (limits.priority) args.push("--priority", limits.priority);
  return args;
}

/**
 * One line of the fork server's stdout, if it reports a child's exit.
 * @example parseExitLine('{"type":"exit","pid":7,"signal":9,"limit":"memory"}') // { pid: 7, exit: { signal: 9, limit: "memory" } }
 */
export function parseExitLine(line: string): { pid: number; exit: ChildExit } | null {
  let m: { type?: unknown; pid?: unknown; code?: unknown; signal?: unknown; limit?: unknown };
  try {
    m = JSON.parse(line);
  } catch {
    return null;
  }
  if (m === null || m.type !== "exit" || typeof m.pid !== "number") return null;
  if (typeof m.signal !== "number") return { pid: m.pid, exit: { code: Number(m.code) } };
  const limit = m.limit === "memory" ? { limit: "memory" as const } : {};
  return { pid: m.pid, exit: { signal: m.signal, ...limit } };
}

/** Exits kept for a session to look up: its socket's close may come before the report. */
const MAX_EXITS = 512;

/**
 * The exits a fork server reported on its stdout, for its sessions to look up: a report may come
 * before the session asks, or after (then it waits for it, a while).
 * @example const exits = exitReports(); exits.note(line); await exits.of(41, 1000);
 */
export function exitReports() {
  const exits = new Map<number, ChildExit>();
  const waiters = new Map<number, (exit: ChildExit) => void>();
  return {
    /** One line of the server's stdout: kept, or handed to whoever waits, if it reports an exit. */
    note(line: string): void {
      const reported = parseExitLine(line);
      if (!reported) return;
      const { pid, exit } = reported;
      const waiter = waiters.get(pid);
      waiters.delete(pid);
      if (waiter) waiter(exit);
      else exits.set(pid, exit);
      // Bounded: the oldest reports go first (pids are reused, so old ones mean nothing anyway).
      if (exits.size > MAX_EXITS) exits.delete(exits.keys().next().value!);
    },
    /** How child `pid` ended; null when no report comes within `waitMs`. */
    of(pid: number, waitMs: number): Promise<ChildExit | null> {
      const known = exits.get(pid);
      if (known) return Promise.resolve(known);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(pid);
          resolve(null);
        }, waitMs);
        waiters.set(pid, (exit) => {
          clearTimeout(timer);
          resolve(exit);
        });
      });
    },
  };
}

function signalName(signal: number): string {
  const entry = Object.entries(constants.signals).find(([, n]) => n === signal);
  return entry ? entry[0] : `signal ${signal}`;
}

/**
 * How a session ends whose process died without saying `done`: a CPU or memory limit is an
 * `error` (running it again would hit it again); a signal or an exit code is a crash (a durable
 * session resumes).
 * @example describeExit(41, { signal: 11 }, NO_LIMITS).message // "the Python process 41 was killed by SIGSEGV"
 */
export function describeExit(pid: number, exit: ChildExit, limits: ProcessLimits): SessionEnd {
  const who = `the Python process ${pid}`;
  if ("code" in exit) {
    return { state: "crashed", message: `${who} exited with code ${exit.code}` };
  }
  const name = signalName(exit.signal);
  if (name === "SIGXCPU") {
    return {
      state: "error",
      message: `${who} reached its CPU limit of ${limits.cpuSeconds} s (SIGXCPU)`,
    };
  }
  if (exit.limit === "memory") {
    return {
      state: "error",
      message: `${who} was killed by ${name}: it reached its memory limit of ${limits.memoryMib} MiB`,
    };
  }
  return { state: "crashed", message: `${who} was killed by ${name}` };
}

/**
 * Settles the end of a session whose socket closed before `done`: how its process ended, as
 * `exitEnd` finds it (its fork server's report), else a crash naming the pid; at once when there
 * is nothing to ask.
 * @example endAfterClose(null, undefined, resolve) // resolve({ state: "crashed", … })
 */
export function endAfterClose(
  pid: number | null,
  exitEnd: ((pid: number) => Promise<SessionEnd | null>) | undefined,
  settle: (end: SessionEnd) => void,
): void {
  const unknown: SessionEnd = {
    state: "crashed",
    message: `the Python process${pid === null ? "" : ` ${pid}`} exited before the session finished`,
  };
  if (pid === null || !exitEnd) {
    settle(unknown);
    return;
  }
  exitEnd(pid).then(
    (end) => settle(end ?? unknown),
    () => settle(unknown),
  );
}
