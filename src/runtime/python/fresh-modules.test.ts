// The default for non-durable sessions (docs/sessions.md, "Fresh modules"): a process an earlier
// session of the deployment left, the project's modules imported anew for each session.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPython } from "../../../test/support/python.ts";
import { type RecordingHost, recordingHost, testSpec } from "../../../test/support/test-host.ts";
import type { BuildFiles } from "../../model/records.ts";
import type { SessionSpec } from "../runtime.ts";
import { FRESH_PROCESS, reuseMode } from "./reuse.ts";
import { createPythonRuntime, type PythonRuntime } from "./runtime.ts";

const HANDLERS = `
import os, string
from workflow_sdk import http_outcome

print("imported")
STATE = {"n": 0}

def on_do(event):
    STATE["n"] += 1
    string.HL_SEEN = getattr(string, "HL_SEEN", 0) + 1  # outside the project: the process's
    print(f"n={STATE['n']} pid={os.getpid()} library={string.HL_SEEN}")
    http_outcome(200, body=str(STATE["n"]))
`;

// A module whose import costs 50 ms of CPU: more than a process of its own (runner/reuse.py).
const SLOW = `
import os, time
until = time.thread_time() + 0.05
while time.thread_time() < until:
    pass

def on_slow(event):
    print(f"pid={os.getpid()}")
`;

const build: BuildFiles = {
  id: "bld_fresh_modules",
  files: { "handlers.py": Buffer.from(HANDLERS).toString("base64") },
};

const spec = (over: Partial<SessionSpec> = {}) =>
  testSpec({ buildId: build.id, entry: "handlers.py:on_do", freshModules: true, ...over });

describe("reuseMode", () => {
  const journal = [{ seq: 0, kind: "outcome" as const }];

  it("reuses with fresh modules by default, keeps modules with reuse_process", () => {
    expect(reuseMode(spec())).toBe("modules");
    expect(reuseMode(spec({ reuseProcess: true }))).toBe("keep");
    expect(reuseMode(testSpec())).toBeNull(); // a runtime's caller that asks for neither
  });

  it("gives durable and resumed sessions, and a project that opts out, a process of their own", () => {
    for (const over of [{ durable: true }, { journal }, { reuseProcess: true, durable: true }]) {
      expect(reuseMode(spec(over))).toBeNull();
    }
    for (const value of ["1", "true", "TRUE"]) {
      expect(reuseMode(spec({ env: { [FRESH_PROCESS]: value } }))).toBeNull();
    }
    expect(reuseMode(spec({ env: { [FRESH_PROCESS]: "0" } }))).toBe("modules");
  });
});

describe("fresh modules, real Python", () => {
  let python: string;
  let dataHome: string;
  let rt: PythonRuntime;

  beforeAll(async () => {
    python = await testPython();
    dataHome = await mkdtemp(join(tmpdir(), "hl-fresh-"));
    rt = createPythonRuntime({ dataHome, python: async () => python, stopGraceMs: 300 });
  }, 180_000);

  afterAll(async () => {
    await rt?.dispose();
    if (dataHome) await rm(dataHome, { recursive: true, force: true });
  });

  /** As a deploy does: the deployment's warm server first, whose children are the ones kept. */
  const prepare = (over: Partial<SessionSpec>) => {
    const { projectId, env, entry } = spec(over);
    return rt.prepare!({ projectId, build, env, entries: [entry] });
  };

  async function run(over: Partial<SessionSpec>, prepared = true) {
    if (prepared) await prepare(over);
    const host = recordingHost();
    expect(await rt.run(spec(over), build, host).done).toEqual({ state: "completed" });
    const line = host.prints.find((p) => p.text.startsWith("n="))!.text;
    const [, n, pid, library] = /^n=(\d+) pid=(\d+) library=(\d+)$/.exec(line)!;
    return { host, n: Number(n), pid: Number(pid), library: Number(library) };
  }

  const texts = (h: RecordingHost) => h.prints.map((p) => p.text);

  it("runs the next session in the same process with the module imported anew", async () => {
    const one = await run({ sessionId: "ses_1" });
    const two = await run({ sessionId: "ses_2" });
    expect([one.n, two.n]).toEqual([1, 1]); // module state of its own
    expect(two.pid).toBe(one.pid); // no fork
    expect(two.library).toBe(one.library + 1); // what lives outside the project stays
    // The import's print is each session's own, as in a fresh process.
    expect(texts(two.host)).toEqual(["imported", `n=1 pid=${one.pid} library=${two.library}`]);
    expect(rt.gauges().idleReusedProcesses).toBe(0); // not reuse_process's (its gauge)
  }, 60_000);

  it("keeps the modes apart: a reuse_process session never takes a fresh-modules process", async () => {
    const fresh = await run({ sessionId: "ses_3" });
    const kept = await run({ sessionId: "ses_4", reuseProcess: true });
    expect(kept.pid).not.toBe(fresh.pid);
  }, 60_000);

  it("ends a process the cold server forked while its deployment has a warm server", async () => {
    const env = { COLOR: "cold first" }; // a deployment of its own: no warm server yet
    const cold = await run({ sessionId: "ses_7", env }, false);
    await prepare({ env });
    const warm = [await run({ sessionId: "ses_8", env }), await run({ sessionId: "ses_9", env })];
    expect(warm[0]!.pid).not.toBe(cold.pid);
    expect(warm[1]!.pid).toBe(warm[0]!.pid);
  }, 60_000);

  it("gives a deployment whose import anew is slow processes of their own from then on", async () => {
    const slow: BuildFiles = {
      id: "bld_slow_import",
      files: { "handlers.py": Buffer.from(SLOW).toString("base64") },
    };
    const over = { buildId: slow.id, entry: "handlers.py:on_slow", env: { COLOR: "slow" } };
    const { projectId, env } = spec(over);
    await rt.prepare!({ projectId, build: slow, env, entries: [over.entry] });
    const pids: number[] = [];
    for (const sessionId of ["ses_s1", "ses_s2", "ses_s3", "ses_s4"]) {
      const host = recordingHost();
      expect(await rt.run(spec({ ...over, sessionId }), slow, host).done).toEqual({
        state: "completed",
      });
      pids.push(Number(host.prints.find((p) => p.text.startsWith("pid="))!.text.slice(4)));
    }
    // The second imported anew (50 ms of CPU) in the first's process, which then ended; the
    // next ones each ran in a process of their own.
    expect(pids[1]).toBe(pids[0]);
    expect(new Set(pids.slice(1)).size).toBe(3);
  }, 60_000);

  it("gives every session a process of its own when the project sets HOOKLINE_FRESH_PROCESS", async () => {
    const env = { [FRESH_PROCESS]: "1" };
    const one = await run({ sessionId: "ses_5", env });
    const two = await run({ sessionId: "ses_6", env });
    expect(two.pid).not.toBe(one.pid);
    expect([one.library, two.library]).toEqual([1, 1]);
  }, 60_000);
});
