import { rm } from "node:fs/promises";
import type net from "node:net";
import { HooklineError } from "../../errors.ts";
import { type ChildExit, exitReports } from "./exits.ts";
import { openSocket, type Prefetched, pastStart, prefetched } from "./fork-socket.ts";
import {
  type ServeOptions,
  type ServeProcess,
  serverEnv,
  startServe,
  stopServe,
} from "./serve-process.ts";

export interface ForkServerOptions {
  /** How long the server may take to import and say `ready`. */
  readyTimeoutMs?: number;
  /** Environment of the server (and so of every session before its vars are set). */
  env?: Record<string, string | undefined>;
  /** More arguments for `serve` (a deployment-warm server's `--warm-dir`, `--warm-modules`). */
  args?: string[];
  /** Silence after `hello` (ms) past which the next connection is made anyway; default 20. */
  refillAfterMs?: number;
}

/**
 * A warm Python parent, `python -m workflow_sdk.runner serve`, that forks one process per
 * connection. One per Python executable. It restarts on the next `connect()` if it died, and
 * kills its children when its stdin closes, so `dispose()` (or this process dying) reaps all.
 * Its process (start, `ready`, stop) is serve-process.ts's; here, the connections it hands out.
 * @example const server = new ForkServer("/data/venv/bin/python"); const socket = await server.connect();
 */
export class ForkServer {
  readonly #python: string;
  readonly #serve: ServeOptions;
  readonly #refillAfterMs: number;
  #starting: Promise<ServeProcess> | null = null;
  #current: ServeProcess | null = null;
  #disposed: Promise<void> | null = null;
  #retired = false;
  readonly #exits = exitReports();
  readonly spares = (): number => (this.#ahead ? 1 : 0); // made ahead, not yet handed out

  constructor(python: string, options: ForkServerOptions = {}) {
    this.#python = python;
    this.#serve = {
      readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
      env: options.env ?? serverEnv(process.env),
      args: options.args ?? [],
    };
    this.#refillAfterMs = options.refillAfterMs ?? 20;
  }

  /** Starts the server now (not at the first `connect()`); rejects when it cannot start. */
  async start(): Promise<void> {
    this.#starting ??= this.#start();
    await this.#starting;
  }

  /** The server's pid once it has started and while it runs. */
  get pid(): number | undefined {
    return this.#current && !this.#current.exited ? this.#current.proc.pid : undefined;
  }

  /**
   * A socket to a freshly forked session process. Starts (or restarts) the server as needed.
   * One connection is kept made ahead (its process has already said `hello`), so a session
   * skips the connect and the child's wake-up; a prefetched socket that died is not used.
   * The next one is made once this session is past its start (`pastStart`): making it wakes a
   * spare and has the server fork another, which would compete with this session for the CPU.
   * The socket comes paused, with what it read put back: `resume()` it once listening.
   */
  async connect(): Promise<net.Socket> {
    const ahead = this.#ahead;
    this.#ahead = null;
    const socket = ahead
      ? await ahead.then(
          (a) => a.take(),
          () => null,
        )
      : null;
    const ready = socket ?? (await this.#connectNow()).pause();
    pastStart(ready, () => this.#prefetch(), this.#refillAfterMs);
    return ready;
  }

  #ahead: Promise<Prefetched> | null = null;

  /**
   * How child `pid` ended, once the server has reaped it; null when no report comes within
   * `waitMs` (the server died too, or the pid is not its child).
   */
  exitOf(pid: number, waitMs: number): Promise<ChildExit | null> {
    return this.#exits.of(pid, waitMs);
  }

  #prefetch() {
    // One at a time: a second would overwrite (and leak) the first under concurrent connects.
    if (this.#disposed || this.#retired || this.#ahead) return;
    this.#ahead = this.#connectNow().then((socket) => {
      // Made against the server running now: if that one dies, its children go with it.
      const server = this.#current;
      return prefetched(socket, () => !server || server.exited || server !== this.#current);
    });
    this.#ahead.catch(() => {});
  }

  async #connectNow(): Promise<net.Socket> {
    for (let attempt = 0; ; attempt++) {
      if (this.#disposed || this.#retired) {
        throw new HooklineError("unavailable", "the Python runtime is shut down");
      }
      let running = this.#starting ? await this.#starting.catch(() => null) : null;
      if (!running || running.exited) {
        if (running) await rm(running.dir, { recursive: true, force: true });
        this.#starting = this.#start();
        running = await this.#starting;
      }
      try {
        return await openSocket(running.socketPath);
      } catch (e) {
        // The server may have died since it was last seen: if so, start it once more.
        await Promise.race([running.exit, new Promise((r) => setTimeout(r, 200))]);
        if (attempt > 0 || !running.exited) throw e;
      }
    }
  }

  /**
   * Takes no more sessions: the server drops its spares and exits once the sessions it started
   * have ended (they run on). `dispose()` still ends it at once. Idempotent.
   */
  async retire(): Promise<void> {
    if (this.#retired) return;
    this.#retired = true;
    // Taken in this tick: a session's connect() in the meantime must not get the one dropped.
    const made = this.#ahead;
    this.#ahead = null;
    (await made?.catch(() => null))?.discard();
    const running = this.#current;
    if (running && !running.exited) running.proc.stdin.write("retire\n");
  }

  /** Closes the server's stdin (it kills its children and exits), then makes sure. Idempotent. */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      const ahead = await this.#ahead?.catch(() => null);
      ahead?.discard();
      const running = await this.#starting?.catch(() => null);
      if (running) await stopServe(running);
    })();
    return this.#disposed;
  }

  async #start(): Promise<ServeProcess> {
    const running = await startServe(this.#python, this.#serve, (line) => this.#exits.note(line));
    this.#current = running;
    return running;
  }
}
