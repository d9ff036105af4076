import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface StandInRequest {
  path: string;
  data: Record<string, unknown> | null;
  headers: [string, string][];
}

/** The stand-in API (stand_in.py), driven a JSON line at a time. */
export interface StandIn {
  url: string;
  /** Declares routes; later ones win (an entry's routes go in just before it runs). */
  routes(routes: Record<string, unknown>): Promise<void>;
  /** `api.env(connection, preset)`: the vars that point its client helper here. */
  env(connection: string, preset?: string): Promise<Record<string, string>>;
  /** How many requests so far. */
  mark(): Promise<number>;
  /** The requests from `since` on, and the `expect` patterns none matched. */
  calls(since: number, expect: string[]): Promise<{ calls: string[]; missing: string[] }>;
  /** Any other command of stand_in.py (its docstring lists them). */
  command<T>(command: Record<string, unknown>): Promise<T>;
  /** The requests matching, with their `data` (JSON, form or query) and headers. */
  requests(method: string, path: string): Promise<StandInRequest[]>;
  close(): void;
}

/**
 * Starts stand_in.py with every preset; resolves once it has printed its URL.
 * @example const api = await startStandIn("python3"); await api.routes({ "GET /x": {} });
 */
export async function startStandIn(python: string): Promise<StandIn> {
  const child: ChildProcessWithoutNullStreams = spawn(
    python,
    [join(import.meta.dirname, "stand_in.py")],
    { stdio: "pipe" },
  );
  const lines = createInterface({ input: child.stdout });
  const waiting: { ok: (line: string) => void; fail: (e: Error) => void }[] = [];
  let exited = false;
  let stderr = "";
  child.stderr.on("data", (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  lines.on("line", (line) => waiting.shift()?.ok(line));
  child.on("exit", () => {
    exited = true;
    for (const w of waiting.splice(0)) w.fail(new Error(`stand-in exited: ${stderr.trim()}`));
  });
  const next = () =>
    new Promise<string>((ok, fail) => {
      if (exited) fail(new Error(`stand-in exited: ${stderr.trim()}`));
      else waiting.push({ ok, fail });
    });
  const first = JSON.parse(await next()) as { url: string };
  let queue: Promise<unknown> = Promise.resolve();
  const ask = <T>(command: Record<string, unknown>): Promise<T> => {
    const run = queue.then(async () => {
      const answer = next();
      child.stdin.write(`${JSON.stringify(command)}\n`);
      const out = JSON.parse(await answer) as T & { error?: string };
      if (out.error) throw new Error(`stand-in ${String(command.op)}: ${out.error}`);
      return out;
    });
    queue = run.catch(() => undefined);
    return run;
  };
  return {
    url: first.url,
    routes: async (routes) => void (await ask({ op: "routes", routes })),
    env: async (connection, preset) =>
      (await ask<{ env: Record<string, string> }>({ op: "env", connection, preset })).env,
    mark: async () => (await ask<{ mark: number }>({ op: "mark" })).mark,
    calls: (since, expect) => ask({ op: "calls", since, expect }),
    command: (command) => ask(command),
    requests: async (method, path) =>
      (await ask<{ requests: StandInRequest[] }>({ op: "requests", method, path })).requests,
    close: () => {
      child.stdin.end();
      if (child.exitCode === null) child.kill("SIGTERM");
    },
  };
}
