import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Floor {
  url: string;
  /** The process serving it. */
  pid: number;
  close(): Promise<void>;
}

const honoScript = fileURLToPath(new URL("./floor-hono.ts", import.meta.url));

/**
 * The bare route our async webhook is measured against (`floor-hono.ts`): a child process on
 * `@hono/node-server`, as our service is one.
 * @example const floor = await startHonoFloor(); await floor.close();
 */
export async function startHonoFloor(): Promise<Floor> {
  const { child, line, close } = await startStdinChild(
    process.execPath,
    honoScript,
    [],
    ["--import", "tsx"],
  );
  return { url: `http://127.0.0.1:${line.port}/`, pid: child.pid!, close };
}

/**
 * The durable floor (`floor-hono.ts --commit`): the same bare route, committing each request's
 * body as one record to an LMDB store of its own (the service's driver, the default store's
 * `sync=normal`) before its 202. What a route that keeps what it answers costs at the least.
 * @example const floor = await startDurableFloor(); await floor.close();
 */
export async function startDurableFloor(): Promise<Floor> {
  const dir = mkdtempSync(join(tmpdir(), "hookline-floor-"));
  const { child, line, close } = await startStdinChild(
    process.execPath,
    honoScript,
    ["--commit", dir],
    ["--import", "tsx"],
  );
  return {
    url: `http://127.0.0.1:${line.port}/`,
    pid: child.pid!,
    async close() {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A child that prints one JSON line when ready and exits when its stdin closes. */
export async function startStdinChild(
  exe: string,
  script: string,
  args: string[] = [],
  exeArgs: string[] = [],
): Promise<{ child: ChildProcess; line: Record<string, unknown>; close(): Promise<void> }> {
  const child = spawn(exe, [...exeArgs, script, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    child.stdin?.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };
  const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const nl = buffered.indexOf("\n");
      if (nl !== -1) resolve(JSON.parse(buffered.slice(0, nl)));
    });
    void exited.then(() => reject(new Error(`${script} exited before it was ready`)));
  }).catch(async (e: unknown) => {
    await close();
    throw e;
  });
  return { child, line, close };
}

const floorScript = fileURLToPath(new URL("./floor_server.py", import.meta.url));

/**
 * The Python floor for the sync round trip: `floor_server.py` (ThreadingHTTPServer or Flask) as a
 * child on a random port. Resolves to `{ skipped }` when the server cannot run (Flask missing).
 * @example const floor = await startPythonFloor(python, "threading");
 */
export async function startPythonFloor(
  python: string,
  kind: "threading" | "flask",
): Promise<Floor | { skipped: string }> {
  const { child, line, close } = await startStdinChild(python, floorScript, [kind]);
  if (typeof line.skipped === "string") {
    await close();
    return { skipped: line.skipped };
  }
  return { url: `http://127.0.0.1:${line.port}/`, pid: child.pid!, close };
}
