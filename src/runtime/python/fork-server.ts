import { rm } from "node:fs/promises";
import type net from "node:net";
import { join } from "node:path";
import { execa } from "execa";
import { HooklineError } from "../../errors.ts";
import { type ChildExit, parseExitLine } from "./exits.ts";
import { openSocket, type Prefetched, pastStart, prefetched } from "./fork-socket.ts";
import { makeRunDir } from "./run-dirs.ts";

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

function spawnServer(
  python: string,
  socketPath: string,
  env: Record<string, string | undefined>,
  args: string[],
) {
  return execa(python, ["-m", "workflow_sdk.runner", "serve", "--socket", socketPath, ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
    cleanup: true,
    extendEnv: false,
    env,
  });
}

type Serve = ReturnType<typeof spawnServer>;

/** Exits kept for a session to look up: its socket's close may come before the report. */
const MAX_EXITS = 512;

interface Running {
  proc: Serve;
  dir: string;
  socketPath: string;
  exited: boolean;
  exit: Promise<unknown>;
}

/**
 * A warm Python parent, `python -m workflow_sdk.runner serve`, that forks one process per
 * connection. One per Python executable. It restarts on the next `connect()` if it died, and
 * kills its children when its stdin closes, so `dispose()` (or this process dying) reaps all.
 * @example const server = new ForkServer("/data/venv/bin/python"); const socket = await server.connect();
 */
export class ForkServer {
  readonly #python: string;
  readonly #readyTimeoutMs: number;
  readonly #env: Record<string, string | undefined>;
  readonly #args: string[];
  readonly #refillAfterMs: number;
  #starting: Promise<Running> | null = null;
  #current: Running | null = null;
  #stderr = "";
  #disposed: Promise<void> | null = null;
  #retired = false;
  readonly #exits = new Map<number, ChildExit>();
  readonly #exitWaiters = new Map<number, (exit: ChildExit) => void>();
  readonly spares = (): number => (this.#ahead ? 1 : 0); // made ahead, not yet handed out

  constructor(python: string, options: ForkServerOptions = {}) {
    this.#python = python;
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    this.#env = options.env ?? serverEnv(process.env);
    this.#args = options.args ?? [];
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
    const known = this.#exits.get(pid);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#exitWaiters.delete(pid);
        resolve(null);
      }, waitMs);
      this.#exitWaiters.set(pid, (exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }

  #onExit(line: string): void {
    const reported = parseExitLine(line);
    if (!reported) return;
    const { pid, exit } = reported;
    const waiter = this.#exitWaiters.get(pid);
    this.#exitWaiters.delete(pid);
    if (waiter) waiter(exit);
    else this.#exits.set(pid, exit);
    // Bounded: the oldest reports go first (pids are reused, so old ones mean nothing anyway).
    if (this.#exits.size > MAX_EXITS) this.#exits.delete(this.#exits.keys().next().value!);
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
    const ahead = await this.#ahead?.catch(() => null);
    this.#ahead = null;
    ahead?.discard();
    const running = this.#current;
    if (running && !running.exited) running.proc.stdin.write("retire\n");
  }

  /** Closes the server's stdin (it kills its children and exits), then makes sure. Idempotent. */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      const ahead = await this.#ahead?.catch(() => null);
      ahead?.discard();
      const running = await this.#starting?.catch(() => null);
      if (!running) return;
      running.proc.stdin.end();
      const timer = setTimeout(() => running.proc.kill("SIGKILL"), 3000);
      await running.exit;
      clearTimeout(timer);
      await rm(running.dir, { recursive: true, force: true });
    })();
    return this.#disposed;
  }

  async #start(): Promise<Running> {
    const dir = await makeRunDir();
    const socketPath = join(dir, "fork.sock");
    this.#stderr = "";
    const proc = spawnServer(this.#python, socketPath, this.#env, this.#args);
    const running: Running = { proc, dir, socketPath, exited: false, exit: proc };
    const markExited = () => {
      running.exited = true;
    };
    running.exit = proc.finally(markExited);
    proc.once("exit", markExited); // dead once it exits: `exit` also waits for its children's pipes
    proc.stdin.on("error", () => {});
    proc.stderr.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-8192);
    });
    try {
      await this.#ready(running);
      this.#current = running;
      return running;
    } catch (e) {
      proc.kill("SIGKILL");
      await running.exit;
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  #ready(running: Running): Promise<void> {
    const { proc } = running;
    return new Promise<void>((resolve, reject) => {
      let buffered = "";
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const fail = (why: string) => {
        const stderr = this.#stderr.trim();
        const detail = stderr ? `:\n${stderr.split("\n").slice(-20).join("\n")}` : "";
        settle(new HooklineError("unavailable", `Python fork server ${why}${detail}`));
      };
      const timer = setTimeout(
        () => fail(`did not start within ${this.#readyTimeoutMs} ms`),
        this.#readyTimeoutMs,
      );
      proc.stdout.on("data", (chunk: Buffer) => {
        // After `ready`, the server writes one line per child it reaps.
        buffered = (buffered + chunk.toString("utf8")).slice(-65_536);
        for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (!settled && isReady(line)) settle();
          else if (settled) this.#onExit(line);
        }
      });
      running.exit.then((r) => {
        const how =
          (r as { signal?: string; exitCode?: number }).signal ??
          `code ${(r as { exitCode?: number }).exitCode}`;
        // Let the last stderr chunk arrive before quoting it.
        setImmediate(() => fail(`exited (${how}) before it was ready`));
      });
    });
  }
}

function isReady(line: string): boolean {
  try {
    return (JSON.parse(line) as { type?: unknown }).type === "ready";
  } catch {
    return false;
  }
}

/**
 * The service's environment minus what is the service's own: `SVC_*` settings (they hold the API
 * token) and Node's variables. Python output is unbuffered so prints arrive as they happen.
 */
export function serverEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(env)) {
    if (value === undefined || /^(SVC_|NODE_|npm_|VITEST)/.test(k)) continue;
    out[k] = value;
  }
  out.PYTHONUNBUFFERED = "1";
  return out;
}
