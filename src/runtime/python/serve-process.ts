import { rm } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { HooklineError } from "../../errors.ts";
import { makeRunDir } from "./run-dirs.ts";

/** How `serve` is started. */
export interface ServeOptions {
  /** How long the server may take to import and say `ready`. */
  readyTimeoutMs: number;
  /** Environment of the server (and so of every session before its vars are set). */
  env: Record<string, string | undefined>;
  /** More arguments for `serve` (a deployment-warm server's `--warm-dir`, `--warm-modules`). */
  args: string[];
}

function spawnServer(python: string, socketPath: string, serve: ServeOptions) {
  const argv = ["-m", "workflow_sdk.runner", "serve", "--socket", socketPath, ...serve.args];
  return execa(python, argv, {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
    cleanup: true,
    extendEnv: false,
    env: serve.env,
  });
}

/** One `serve` process that said `ready`, in its own run directory (its socket is there). */
export interface ServeProcess {
  proc: ReturnType<typeof spawnServer>;
  dir: string;
  socketPath: string;
  /** Set once the process has exited (its children may still hold its pipes). */
  exited: boolean;
  /** Resolves once it has exited and its pipes have closed. */
  exit: Promise<unknown>;
}

/**
 * Starts `python -m workflow_sdk.runner serve` and resolves once it says `ready`; every line it
 * writes to stdout after that (one per child it reaps) goes to `onLine`. Rejects, quoting the
 * end of its stderr, when it exits or stays silent past `readyTimeoutMs`: it is killed and its
 * run directory removed.
 * @example const serve = await startServe(python, { readyTimeoutMs: 60_000, env, args: [] }, note);
 */
export async function startServe(
  python: string,
  serve: ServeOptions,
  onLine: (line: string) => void,
): Promise<ServeProcess> {
  const dir = await makeRunDir();
  const socketPath = join(dir, "fork.sock");
  const proc = spawnServer(python, socketPath, serve);
  const running: ServeProcess = { proc, dir, socketPath, exited: false, exit: proc };
  const markExited = () => {
    running.exited = true;
  };
  running.exit = proc.finally(markExited);
  proc.once("exit", markExited); // dead once it exits: `exit` also waits for its children's pipes
  proc.stdin.on("error", () => {});
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8192);
  });
  try {
    await ready(running, serve.readyTimeoutMs, () => stderr, onLine);
    return running;
  } catch (e) {
    proc.kill("SIGKILL");
    await running.exit;
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Closes the server's stdin (it kills its children and exits), kills it if it has not gone
 * within 3 s, and removes its run directory.
 */
export async function stopServe(running: ServeProcess): Promise<void> {
  running.proc.stdin.end();
  const timer = setTimeout(() => running.proc.kill("SIGKILL"), 3000);
  await running.exit;
  clearTimeout(timer);
  await rm(running.dir, { recursive: true, force: true });
}

function ready(
  running: ServeProcess,
  timeoutMs: number,
  stderr: () => string,
  onLine: (line: string) => void,
): Promise<void> {
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
      const said = stderr().trim();
      const detail = said ? `:\n${said.split("\n").slice(-20).join("\n")}` : "";
      settle(new HooklineError("unavailable", `Python fork server ${why}${detail}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs} ms`), timeoutMs);
    proc.stdout.on("data", (chunk: Buffer) => {
      // After `ready`, the server writes one line per child it reaps.
      buffered = (buffered + chunk.toString("utf8")).slice(-65_536);
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!settled && isReady(line)) settle();
        else if (settled) onLine(line);
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

function isReady(line: string): boolean {
  try {
    return (JSON.parse(line) as { type?: unknown }).type === "ready";
  } catch {
    return false;
  }
}

/**
 * The service's environment minus what is the service's own: `SVC_*` settings (they hold the API
 * token), its OAuth apps' secrets (`GOOGLE_CLIENT_SECRET`, any `<NAME>_CLIENT_SECRET`: a session
 * gets tokens, never what mints them) and Node's variables. Python output is unbuffered so
 * prints arrive as they happen.
 * @example serverEnv({ PATH: "/bin", SVC_API_TOKEN: "t" }) // { PATH: "/bin", PYTHONUNBUFFERED: "1" }
 */
export function serverEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(env)) {
    if (value === undefined || /^(SVC_|NODE_|npm_|VITEST)|_CLIENT_SECRET$/.test(k)) continue;
    out[k] = value;
  }
  out.PYTHONUNBUFFERED = "1";
  return out;
}
