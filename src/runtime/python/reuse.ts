import type net from "node:net";
import type { SessionSpec } from "../runtime.ts";
import type { ForkServer } from "./fork-server.ts";
import { warmKey } from "./warm.ts";

/** A var that gives a project's every session a process of its own (`"1"` or `"true"`). */
export const FRESH_PROCESS = "HOOKLINE_FRESH_PROCESS";

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

/** Deployments remembered as slow to import anew; past it the memory starts again. */
const MAX_SLOW = 1024;

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
  mode: ReuseMode;
  deployment: string;
  projectId: string;
  since: number;
  timer: NodeJS.Timeout;
  unwatch: () => void;
}

/**
 * How a session may reuse a process: `keep` (its trigger's `reuse_process: true`: module state
 * kept), `modules` (the default for a non-durable session: the project's modules imported anew
 * for it), or null (a process of its own: durable and resumed sessions, replay checks, and the
 * sessions of a project whose var HOOKLINE_FRESH_PROCESS is `1` or `true`).
 */
export type ReuseMode = "keep" | "modules";

/**
 * The way `spec` may reuse a process, or null.
 * @example reuseMode({ ...spec, freshModules: true }) // "modules"
 */
export function reuseMode(spec: SessionSpec): ReuseMode | null {
  if (spec.durable || spec.journal.length > 0 || spec.check) return null;
  if (spec.reuseProcess === true) return "keep";
  const optOut = spec.env[FRESH_PROCESS]?.toLowerCase();
  return spec.freshModules === true && optOut !== "1" && optOut !== "true" ? "modules" : null;
}

/** A session that may run in a reused process (see `reuseMode`). */
export function reusable(spec: SessionSpec): boolean {
  return reuseMode(spec) !== null;
}

/** The deployment (build and vars, as warm.ts keys them), the entry and the mode a process serves. */
function keyOf(spec: SessionSpec) {
  const deployment = warmKey(spec);
  const mode = reuseMode(spec) ?? "keep";
  return { deployment, mode, key: `${deployment}|${spec.entry}|${mode}` };
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
  /** Keys (deployment, entry, mode) whose modules are slow to import anew: no reuse for them. */
  readonly #slow = new Set<string>();
  /** Idle processes now, by mode. */
  readonly #count = { keep: 0, modules: 0 };
  #disposed = false;
  /** Sessions that may reuse, by mode and the process they ran on (`/metrics`). */
  readonly #ran = { keep: { reused: 0, fresh: 0 }, modules: { reused: 0, fresh: 0 } };

  constructor(options: Partial<ReuseOptions> = {}) {
    this.#options = { ...REUSE_DEFAULTS, ...options };
  }

  /** Idle processes kept now for triggers with `reuse_process: true` (`of("modules")`: the rest). */
  get size(): number {
    return this.#count.keep;
  }

  /** Sessions of triggers with the option so far: on a process an earlier one left, or fresh. */
  get sessions(): { reused: number; fresh: number } {
    return { ...this.#ran.keep };
  }

  /** Idle processes and sessions so far of one mode. */
  of(mode: ReuseMode): { idle: number; sessions: { reused: number; fresh: number } } {
    return { idle: this.#count[mode], sessions: { ...this.#ran[mode] } };
  }

  /** A session ran (to its end) on `reused`, or on a fresh process when null: counted if it may reuse. */
  ran(spec: SessionSpec, reused: ReusedProcess | null): void {
    const mode = reuseMode(spec);
    if (mode) this.#ran[mode][reused ? "reused" : "fresh"]++;
  }

  /**
   * Importing `spec`'s project anew took longer than a process of its own costs (runner/reuse.py):
   * its deployment's sessions get processes of their own from now on, forked from the warm
   * server that imported the project once.
   */
  slowImport(spec: SessionSpec): void {
    if (reuseMode(spec) !== "modules") return;
    if (this.#slow.size >= MAX_SLOW) this.#slow.clear();
    this.#slow.add(keyOf(spec).key);
  }

  /** An idle process for this session, or null (it then runs on a fresh one). */
  take(spec: SessionSpec): ReusedProcess | null {
    if (this.#disposed || !this.#mayReuse(spec)) return null;
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
    return this.#mayReuse(spec) && (reused?.sessions ?? 0) + 1 < this.#options.maxSessions;
  }

  #mayReuse(spec: SessionSpec): boolean {
    return reusable(spec) && !this.#slow.has(keyOf(spec).key);
  }

  /** A process that finished a session of `spec` and stays: kept idle, or ended past a bound. */
  give(spec: SessionSpec, p: ReusedProcess): void {
    const { deployment, key, mode } = keyOf(spec);
    const list = this.#idle.get(key) ?? [];
    const current = this.#latest.get(spec.projectId) === deployment;
    if (this.#disposed || !current || list.length >= this.#options.maxIdle) {
      p.socket.destroy(); // EOF: the idle process exits (runner/reuse.py)
      return;
    }
    if (this.#count.keep + this.#count.modules >= this.#options.maxIdleTotal) this.#evictOldest();
    const idle: Idle = {
      ...p,
      key,
      mode,
      deployment,
      projectId: spec.projectId,
      since: Date.now(),
      timer: setTimeout(() => this.#end(idle), this.#options.idleMs).unref(),
      unwatch: () => {},
    };
    idle.unwatch = watch(p.socket, () => this.#end(idle));
    list.push(idle);
    this.#idle.set(key, list);
    this.#count[mode]++;
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
    this.#count[idle.mode]--;
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
