import type net from "node:net";
import type { SessionSpec } from "../runtime.ts";
import type { ForkServer } from "./fork-server.ts";
import { warmKey } from "./warm.ts";

/**
 * Bounds of the processes kept for reuse (docs/sessions.md, "Reused processes"). The runtime
 * keeps as many idle as sessions may run at once (`maxSessions`): a burst's sessions end
 * together and the ones waiting for their slots take their processes a moment later, so a
 * smaller pool ends processes that the next sessions then fork again (measured: 4 a key let
 * 13 % of the bench's sessions fork, 32 under 2 %).
 */
export interface ReuseOptions {
  /** Idle processes kept per deployment and entry; one that finishes a session past it ends. */
  maxIdle: number;
  /** Idle processes kept in all; past it the one idle longest ends. */
  maxIdleTotal: number;
  /** Sessions one process runs; the last of them ends it. */
  maxSessions: number;
  /** An idle process unused this long ends. */
  idleMs: number;
}

export const REUSE_DEFAULTS: ReuseOptions = {
  maxIdle: 32,
  maxIdleTotal: 32,
  maxSessions: 1000,
  idleMs: 60_000,
};

/** A process that ran sessions and stays for more, over the connection it was made with. */
export interface ReusedProcess {
  /** Paused while nobody reads it. */
  socket: net.Socket;
  pid: number;
  /** The fork server that forked it: it reports the process's exit. */
  from: ForkServer;
  /** Sessions it has run. */
  sessions: number;
}

interface Idle extends ReusedProcess {
  key: string;
  deployment: string;
  projectId: string;
  since: number;
  timer: NodeJS.Timeout;
  unwatch: () => void;
}

/** A session that may run in a reused process: its trigger opted in, not durable, not resumed. */
export function reusable(spec: SessionSpec): boolean {
  return spec.reuseProcess === true && !spec.durable && spec.journal.length === 0;
}

/** The deployment (build and vars, as warm.ts keys them) and the entry a process serves. */
function keyOf(spec: SessionSpec) {
  const deployment = warmKey(spec);
  return { deployment, key: `${deployment}|${spec.entry}` };
}

/**
 * The idle processes of triggers with `reuse_process: true`, per deployment and entry. A
 * session takes the one idle last (LIFO), else runs on a fresh process as any other; at its
 * end its process comes back when it said it stays and the bounds allow, else it ends. A
 * project's newer deployment (or vars) ends the processes of its older ones.
 * @example const p = pool.take(spec); … if (socket.reusable) pool.give(spec, { …, sessions: 1 });
 */
export class ReusePool {
  readonly #options: ReuseOptions;
  readonly #idle = new Map<string, Idle[]>();
  /** The deployment of each project's latest session: one entry per project that reuses. */
  readonly #latest = new Map<string, string>();
  #count = 0;
  #disposed = false;
  /** Sessions that may reuse, by the process they ran on (`/metrics`). */
  readonly #ran = { reused: 0, fresh: 0 };

  constructor(options: Partial<ReuseOptions> = {}) {
    this.#options = { ...REUSE_DEFAULTS, ...options };
  }

  /** Idle processes kept now. */
  get size(): number {
    return this.#count;
  }

  /** Sessions of triggers with the option so far: on a process an earlier one left, or fresh. */
  get sessions(): { reused: number; fresh: number } {
    return { ...this.#ran };
  }

  /** A session ran (to its end) on `reused`, or on a fresh process when null: counted if it may reuse. */
  ran(spec: SessionSpec, reused: ReusedProcess | null): void {
    if (reusable(spec)) this.#ran[reused ? "reused" : "fresh"]++;
  }

  /** An idle process for this session, or null (it then runs on a fresh one). */
  take(spec: SessionSpec): ReusedProcess | null {
    if (this.#disposed || !reusable(spec)) return null;
    const { deployment, key } = keyOf(spec);
    this.replaced(spec.projectId, deployment);
    for (let idle = this.#idle.get(key)?.at(-1); idle; idle = this.#idle.get(key)?.at(-1)) {
      this.#remove(idle);
      const { socket, pid, from, sessions } = idle;
      if (!socket.destroyed && !socket.readableEnded) return { socket, pid, from, sessions };
      socket.destroy(); // it died just now
    }
    return null;
  }

  /** Whether the process may stay after the session about to run on it (`start`'s `reuse`). */
  staysAfter(spec: SessionSpec, reused: ReusedProcess | null): boolean {
    return reusable(spec) && (reused?.sessions ?? 0) + 1 < this.#options.maxSessions;
  }

  /** A process that finished a session of `spec` and stays: kept idle, or ended past a bound. */
  give(spec: SessionSpec, p: ReusedProcess): void {
    const { deployment, key } = keyOf(spec);
    const list = this.#idle.get(key) ?? [];
    const current = this.#latest.get(spec.projectId) === deployment;
    if (this.#disposed || !current || list.length >= this.#options.maxIdle) {
      p.socket.destroy(); // EOF: the idle process exits (runner/reuse.py)
      return;
    }
    if (this.#count >= this.#options.maxIdleTotal) this.#evictOldest();
    const idle: Idle = {
      ...p,
      key,
      deployment,
      projectId: spec.projectId,
      since: Date.now(),
      timer: setTimeout(() => this.#end(idle), this.#options.idleMs).unref(),
      unwatch: () => {},
    };
    idle.unwatch = watch(p.socket, () => this.#end(idle));
    list.push(idle);
    this.#idle.set(key, list);
    this.#count++;
  }

  /** A project's sessions now run on `deployment`: its idle processes of others end. */
  replaced(projectId: string, deployment: string): void {
    if (this.#latest.get(projectId) === deployment) return;
    this.#latest.set(projectId, deployment);
    for (const list of [...this.#idle.values()]) {
      for (const idle of [...list]) {
        if (idle.projectId === projectId && idle.deployment !== deployment) this.#end(idle);
      }
    }
  }

  /** Ends every idle process. Idempotent. */
  dispose(): void {
    this.#disposed = true;
    for (const list of [...this.#idle.values()]) for (const idle of [...list]) this.#end(idle);
  }

  #evictOldest(): void {
    let oldest: Idle | null = null;
    for (const list of this.#idle.values()) {
      for (const idle of list) if (!oldest || idle.since < oldest.since) oldest = idle;
    }
    if (oldest) this.#end(oldest);
  }

  #end(idle: Idle): void {
    if (this.#remove(idle)) idle.socket.destroy();
  }

  /** Out of the pool (false: it was not in it); its socket is left as it is. */
  #remove(idle: Idle): boolean {
    const list = this.#idle.get(idle.key);
    const at = list?.indexOf(idle) ?? -1;
    if (!list || at === -1) return false;
    list.splice(at, 1);
    if (list.length === 0) this.#idle.delete(idle.key);
    this.#count--;
    clearTimeout(idle.timer);
    idle.unwatch();
    return true;
  }
}

/**
 * Watches an idle process's socket: it closing (the process died) or saying anything (it has
 * nothing to say between sessions) calls `gone`. Returns what stops watching, the socket paused.
 */
function watch(socket: net.Socket, gone: () => void): () => void {
  const onData = () => gone();
  const onClose = () => gone();
  const onError = () => {};
  socket.on("data", onData).on("close", onClose).on("error", onError);
  socket.resume();
  return () => {
    socket.off("data", onData).off("close", onClose).off("error", onError);
    socket.pause();
  };
}
