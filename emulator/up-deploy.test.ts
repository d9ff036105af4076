import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, testPython } from "../test/support/python.ts";

/**
 * `cli up --deploy` as a user runs it: a process on its own data home (lmdb storage), stopped with
 * SIGTERM and started again on the same data. Every start prints every trigger's webhook URL.
 */

const MANIFEST = join(repoRoot, "test/fixtures/cli-v1/manifest.yaml");
const WEBHOOK_LINE =
  /^│ webhook "([^"]+)": (http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26}) +│$/;

let home: string;
let python: string;
let running: ChildProcess | null = null;

beforeAll(async () => {
  python = await testPython();
  home = await mkdtemp(join(tmpdir(), "hookline-up-deploy-"));
}, 180_000);

afterEach(async () => {
  if (running) await stop(running);
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** SIGTERM to the process group (Python children too); resolves with the exit code or signal. */
function stop(child: ChildProcess): Promise<number | string | null> {
  running = null;
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode);
  }
  const exited = new Promise<number | string | null>((ok) =>
    child.once("exit", (code, signal) => ok(code ?? signal)),
  );
  process.kill(-child.pid!, "SIGTERM");
  return exited;
}

/** The environment without SVC_* settings: `up` must take the defaults (lmdb storage in the data home). */
const withoutSvc = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("SVC_")));

/** Starts `cli up --deploy` and resolves with its stdout lines once `count` webhook lines are out. */
async function up(count: number): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(
    "node",
    [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "dev", "--port", "0", "--deploy", MANIFEST],
    {
      env: {
        ...withoutSvc(process.env),
        XDG_DATA_HOME: join(home, "data"),
        XDG_CONFIG_HOME: join(home, "config"),
        SVC_WORKER_PYTHON: python,
      },
      detached: true, // its own process group, so one signal reaches every child
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  running = child;
  const lines: string[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no webhook lines in 60 s: ${stderr}`)), 60_000);
    child.once("exit", (code) => fail(new Error(`cli up exited ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (lines.filter((l) => WEBHOOK_LINE.test(l)).length === count) {
        clearTimeout(timer);
        ok();
      }
    });
  });
  return { child, lines };
}

const webhooks = (lines: string[]) =>
  Object.fromEntries(
    lines.flatMap((l) => {
      const m = WEBHOOK_LINE.exec(l);
      return m ? [[m[1]!, m[2]!]] : [];
    }),
  );

describe("cli up --deploy", () => {
  it("prints every webhook URL at each start, the same ones after a restart, and they work", async () => {
    const first = await up(2);
    expect(first.lines).toContainEqual(
      expect.stringMatching(/^\[exec\] trigger "hook" created, webhook path is /),
    );
    const before = webhooks(first.lines);
    expect(Object.keys(before).sort()).toEqual(["hook", "legacy"]);
    expect(await stop(first.child)).toBe(0);

    // Nothing is created the second time, and still every URL is printed.
    const second = await up(2);
    expect(second.lines).toContain('[plan] trigger "cli_demo:/hook": found, no changes needed');
    expect(second.lines.join("\n")).not.toContain("webhook path is");
    const after = webhooks(second.lines);
    const path = (url: string) => new URL(url).pathname;
    expect(Object.keys(after).sort()).toEqual(["hook", "legacy"]);
    expect(path(after.hook!)).toBe(path(before.hook!));
    expect(path(after.legacy!)).toBe(path(before.legacy!));
    const res = await fetch(after.hook!, { method: "POST" });
    expect(res.status).toBe(202);
  }, 180_000);
});
