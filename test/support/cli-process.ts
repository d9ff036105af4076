import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { repoRoot } from "./python.ts";

/** `cli` as a long-running process (`up`, `dev`, `--follow`), its output collected line by line. */

const running = new Set<ChildProcess>();

/**
 * Stops every process {@link startCli} started that still runs.
 * @example afterEach(stopAll);
 */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map(stop));
}

/**
 * SIGTERM to the process group (Python children too); resolves with the exit code or signal.
 * @example expect(await stop(up.child)).toBe(0);
 */
export function stop(child: ChildProcess): Promise<number | string | null> {
  running.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode);
  }
  const exited = new Promise<number | string | null>((ok) =>
    child.once("exit", (code, signal) => ok(code ?? signal)),
  );
  process.kill(-child.pid!, "SIGTERM");
  return exited;
}

/** A running `cli` whose output lines are collected; `until` waits for a line to match. */
export interface Running {
  child: ChildProcess;
  out: string[];
  err: string[];
  until(stream: "out" | "err", match: RegExp, count?: number): Promise<string>;
  /** Its exit code once it has exited and its output is read. */
  exited: Promise<number | null>;
}

/**
 * Spawns `node bin/cli.mjs …` in its own process group, with the environment less any `SVC_*`
 * setting, plus `env`.
 * @example const up = startCli(["up", "--port", "0"], { XDG_DATA_HOME: home }); await up.until("out", /listening/);
 */
export function startCli(args: string[], env: NodeJS.ProcessEnv, cwd = repoRoot): Running {
  const child = spawn("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
    cwd,
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_"))),
      ...env,
    },
    detached: true, // its own process group, so one signal reaches every child
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const lines = { out: [] as string[], err: [] as string[] };
  const waiters = new Set<() => void>();
  for (const [name, stream] of [
    ["out", child.stdout!],
    ["err", child.stderr!],
  ] as const) {
    createInterface({ input: stream }).on("line", (line) => {
      lines[name].push(line);
      for (const wake of waiters) wake();
    });
  }
  const until = (stream: "out" | "err", match: RegExp, count = 1) =>
    new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        fail(new Error(`no ${count}× ${match} on std${stream} in 30 s:\n${lines.err.join("\n")}`));
      }, 30_000);
      function check() {
        const hits = lines[stream].filter((l) => match.test(l));
        if (hits.length < count) return;
        clearTimeout(timer);
        waiters.delete(check);
        ok(hits[count - 1]!);
      }
      waiters.add(check);
      check();
    });
  const exited = new Promise<number | null>((ok) => child.once("close", (code) => ok(code)));
  exited.then(() => running.delete(child));
  return { child, ...lines, until, exited };
}
