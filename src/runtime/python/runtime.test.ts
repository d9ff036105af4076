import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPython } from "../../../test/support/python.ts";
import { recordingHost, testEvent, testSpec } from "../../../test/support/test-host.ts";
import type { BuildFiles } from "../../model/records.ts";
import { createPythonRuntime, type PythonRuntime } from "./runtime.ts";

const HANDLERS = `
import os, sys, time
from workflow_sdk import activity, http_outcome, next_event, subscribe, unsubscribe

print("imported with", os.environ["GREETING"])

@activity
def double(x):
    return x * 2

def on_post(event):
    print("hello", event.data.body.text)
    print("to stderr", file=sys.stderr)
    n = double(21)
    http_outcome(201, headers={"X-N": str(n)}, body=f"n={n}")

def on_wait(event):
    sid = subscribe("hook", "")
    e = next_event(sid, timeout=5)
    print("got", e.data.body.text)
    print("then", next_event(sid, timeout=0))
    unsubscribe(sid)
    try:
        subscribe("nope")
    except ValueError as err:
        print("ValueError:", err)

def on_loop(event):
    print(f"looping {os.getpid()}")
    while True:
        time.sleep(0.05)

def on_crash(event):
    print("crashing")
    os.kill(os.getpid(), 9)

def on_fail(event):
    raise KeyError("missing")
`;

const build: BuildFiles = {
  id: "bld_runtime_test",
  files: { "handlers.py": Buffer.from(HANDLERS).toString("base64") },
};

/** Pids of `pid`'s descendants. */
function descendants(pid: number): number[] {
  const out = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" });
  const children = new Map<number, number[]>();
  for (const line of out.trim().split("\n")) {
    const [p, pp] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(pp, [...(children.get(pp) ?? []), p]);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      walk(c);
    }
  };
  walk(pid);
  return all.filter((p) => p !== pid);
}

/** The pid a session running `on_loop` printed. */
function loopingPid(host: { prints: { text: string }[] }): number | undefined {
  const line = host.prints.find((p) => p.text.startsWith("looping "));
  return line ? Number(line.text.slice("looping ".length)) : undefined;
}

/** Starts a session running `on_loop` on `rt`; resolves once it printed its pid. */
async function looping(rt: PythonRuntime) {
  const host = recordingHost();
  const run = rt.run(
    testSpec({ entry: "handlers.py:on_loop", workflowTimeoutMs: 60_000 }),
    build,
    host,
  );
  while (loopingPid(host) === undefined) await new Promise((r) => setTimeout(r, 10));
  return { host, run, pid: loopingPid(host)! };
}

function parentOf(pid: number): number {
  return Number(
    execFileSync("ps", ["-o", "ppid=", "-p", String(pid)], { encoding: "utf8" }).trim(),
  );
}

/** Waits until none of `pids` is a descendant of this process any more; returns those left. */
async function goneFromTree(pids: number[], ms = 5000): Promise<number[]> {
  const end = Date.now() + ms;
  for (;;) {
    const alive = new Set(descendants(process.pid));
    const left = pids.filter((p) => alive.has(p));
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function pythonsUnder(pid: number): number[] {
  return descendants(pid).filter((p) => {
    try {
      return execFileSync("ps", ["-o", "args=", "-p", String(p)], { encoding: "utf8" }).includes(
        "workflow_sdk.runner",
      );
    } catch {
      return false;
    }
  });
}

describe("createPythonRuntime (real Python)", () => {
  let python: string;
  let dataHome: string;
  let runtime: PythonRuntime;

  beforeAll(async () => {
    python = await testPython();
    dataHome = await mkdtemp(join(tmpdir(), "hl-rt-"));
    runtime = createPythonRuntime({ dataHome, python: async () => python, stopGraceMs: 500 });
  }, 180_000);

  afterAll(async () => {
    await runtime?.dispose();
    if (dataHome) await rm(dataHome, { recursive: true, force: true });
  });

  it("runs a handler: prints, an activity, an outcome, completed", async () => {
    const host = recordingHost();
    const t0 = performance.now();
    const run = runtime.run(testSpec({ entry: "handlers.py:on_post" }), build, host);
    expect(await run.done).toEqual({ state: "completed" });
    console.log(
      `cold session (fork server start included): ${Math.round(performance.now() - t0)} ms`,
    );
    expect(host.prints).toEqual([
      { text: "imported with hi", stream: "stdout" },
      { text: "hello hello", stream: "stdout" },
      { text: "to stderr", stream: "stderr" },
    ]);
    expect(host.activities).toEqual([
      {
        id: 1, // numbered: the start it ends, had it run 50 ms
        function: expect.stringContaining("double"),
        duration_ms: expect.any(Number),
        ok: true,
      },
    ]);
    expect(host.outcomes).toEqual([
      { status_code: 201, headers: { "X-N": "42" }, body: Buffer.from("n=42"), more: false },
    ]);
    const t1 = performance.now();
    const again = recordingHost();
    expect(await runtime.run(testSpec(), build, again).done).toEqual({ state: "completed" });
    console.log(`warm session: ${Math.round(performance.now() - t1)} ms`);
  }, 60_000);

  it("reports a failing handler with its traceback", async () => {
    const end = await runtime.run(
      testSpec({ entry: "handlers.py:on_fail" }),
      build,
      recordingHost(),
    ).done;
    expect(end).toMatchObject({ state: "error", message: "KeyError: 'missing'" });
    expect(end.state === "error" && end.traceback).toMatch(/on_fail/);
  }, 30_000);

  it("serves subscribe, next_event and unsubscribe", async () => {
    const host = recordingHost();
    host.events.push(testEvent("second"), null);
    const end = await runtime.run(testSpec({ entry: "handlers.py:on_wait" }), build, host).done;
    expect(end).toEqual({ state: "completed" });
    expect(host.starts).toBe(1);
    expect(host.calls).toEqual([
      "subscribe hook ",
      "next_event sub_1 5000",
      "next_event sub_1 0",
      "unsubscribe sub_1",
      "subscribe nope ",
    ]);
    expect(host.prints.map((p) => p.text)).toEqual([
      "imported with hi",
      "got second",
      "then None",
      'ValueError: unknown source "nope"',
    ]);
  }, 30_000);

  it("journals a durable session's steps and replays them on resume", async () => {
    const spec = testSpec({ durable: true });
    const host = recordingHost(spec);
    expect(await runtime.run(spec, build, host).done).toEqual({ state: "completed" });
    expect(host.journaled).toEqual([
      {
        seq: 0,
        kind: "activity",
        function: expect.stringContaining("double"),
        result: expect.any(String),
        args: expect.stringMatching(/^[0-9a-f]{16}$/),
      },
      { seq: 1, kind: "outcome" },
    ]);
    // Resumed after the activity: nothing printed again, the outcome goes out live as step 1.
    const journal = host.journaled.slice(0, 1);
    const resumed = recordingHost({ ...spec, journal });
    const end = await runtime.run({ ...spec, journal }, build, resumed).done;
    expect(end).toEqual({ state: "completed" });
    expect(resumed.activities).toEqual([]);
    expect(resumed.outcomes).toHaveLength(1);
    expect(resumed.journaled).toEqual([{ seq: 1, kind: "outcome" }]);
  }, 30_000);

  it("journals a failed request, and a replay raises the same error without asking the host", async () => {
    const spec = testSpec({ entry: "handlers.py:on_wait", durable: true });
    const host = recordingHost(spec);
    host.events.push(testEvent("second"), null);
    expect(await runtime.run(spec, build, host).done).toEqual({ state: "completed" });
    expect(host.journaled.map((s) => s.kind)).toEqual([
      "subscribe",
      "next_event",
      "next_event",
      "unsubscribe",
      "subscribe",
    ]);
    expect(host.journaled[4]).toMatchObject({
      seq: 4,
      error: "ValueError",
      message: 'unknown source "nope"',
    });
    const resumed = recordingHost({ ...spec, journal: host.journaled });
    const end = await runtime.run({ ...spec, journal: host.journaled }, build, resumed).done;
    expect(end).toEqual({ state: "completed" });
    expect(resumed.calls).toEqual([]);
    expect(resumed.prints.map((p) => p.text)).toEqual(['ValueError: unknown source "nope"']);
  }, 30_000);

  it("stop() ends a running session as stopped and its process is gone", async () => {
    // Its own process, not a count: spares of the fork server come and go meanwhile.
    const { run, pid } = await looping(runtime);
    expect(pythonsUnder(process.pid)).toContain(pid);
    await run.stop();
    expect(await run.done).toEqual({ state: "stopped" });
    await run.stop();
    expect(await goneFromTree([pid])).toEqual([]); // the fork server reaps it on SIGCHLD
  }, 30_000);

  it("runs a session whose process, made ahead, died with its fork server before it began", async () => {
    const own = createPythonRuntime({ dataHome, python: async () => python, warm: { max: 0 } });
    try {
      const { run: loop, pid } = await looping(own);
      const server = parentOf(pid);
      // The server's spares and the child connected ahead die with it; the next session is
      // handed that connection at once, before the service has seen anything close. They are
      // stopped first (SIGSTOP), so none can begin the session in the moment between the
      // server's end and its parent-death signal (SIGKILL, which ends a stopped process too).
      for (const child of pythonsUnder(server).filter((p) => p !== pid)) {
        process.kill(child, "SIGSTOP");
      }
      process.kill(server, "SIGKILL");
      const host = recordingHost();
      const end = await own.run(testSpec({ entry: "handlers.py:on_post" }), build, host).done;
      expect(end, JSON.stringify(end)).toEqual({ state: "completed" });
      expect(host.starts).toBe(1);
      expect(host.prints.map((p) => p.text)).toContain("hello hello");
      expect((await loop.done).state).toBe("crashed");
    } finally {
      await own.dispose();
    }
  }, 30_000);

  it("a process that dies gives crashed", async () => {
    const end = await runtime.run(
      testSpec({ entry: "handlers.py:on_crash" }),
      build,
      recordingHost(),
    ).done;
    expect(end).toMatchObject({ state: "crashed" });
  }, 30_000);

  it("a bad entry ends in error, not crashed", async () => {
    const end = await runtime.run(testSpec({ entry: "handlers.py:nope" }), build, recordingHost())
      .done;
    expect(end).toMatchObject({ state: "error", message: expect.stringContaining("nope") });
  }, 30_000);

  it("bounds running sessions and queues the rest in order", async () => {
    const small = createPythonRuntime({
      dataHome,
      python: async () => python,
      slots: { maxRunning: 1, maxWaiting: 1 },
    });
    try {
      const loopHost = recordingHost();
      const first = small.run(
        testSpec({ entry: "handlers.py:on_loop", workflowTimeoutMs: 60_000 }),
        build,
        loopHost,
      );
      while (loopHost.prints.length < 2) await new Promise((r) => setTimeout(r, 10));
      const waitingHost = recordingHost();
      const second = small.run(testSpec(), build, waitingHost);
      const third = small.run(testSpec(), build, recordingHost());
      expect(await third.done).toEqual({
        state: "error",
        message: "too many sessions: 1 running and 1 waiting",
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(waitingHost.prints).toEqual([]); // still queued
      await first.stop();
      expect(await second.done).toEqual({ state: "completed" });
      // Stopping a queued session never starts it.
      const blocker = small.run(
        testSpec({ entry: "handlers.py:on_loop", workflowTimeoutMs: 60_000 }),
        build,
        recordingHost(),
      );
      const queued = small.run(testSpec(), build, recordingHost());
      await queued.stop();
      expect(await queued.done).toEqual({ state: "stopped" });
      await blocker.stop();
    } finally {
      await small.dispose();
    }
  }, 60_000);

  it("dispose() stops every session and leaves no Python process", async () => {
    // Only the cold server here: warm servers have their own tests (test/warm-deployments).
    const own = createPythonRuntime({
      dataHome,
      python: async () => python,
      stopGraceMs: 500,
      warm: { max: 0 },
    });
    const hosts = [recordingHost(), recordingHost()];
    const runs = hosts.map((h) =>
      own.run(testSpec({ entry: "handlers.py:on_loop", workflowTimeoutMs: 60_000 }), build, h),
    );
    for (const h of hosts) while (h.prints.length < 2) await new Promise((r) => setTimeout(r, 10));
    // Counted under this runtime's own fork server (the sessions' parent), not the whole tree.
    const server = parentOf(loopingPid(hosts[0]!)!);
    expect(parentOf(loopingPid(hosts[1]!)!)).toBe(server);
    const tree = [server, ...pythonsUnder(server)];
    // the server, its 2 ready spares, the child connected ahead, and 2 sessions
    expect(tree.length).toBe(6);
    await own.dispose();
    for (const r of runs) expect(await r.done).toEqual({ state: "stopped" });
    expect(await goneFromTree(tree)).toEqual([]);
    await own.dispose(); // idempotent
    // A run asked after it ends as those it had did: the service stopping left it unstarted.
    expect(await own.run(testSpec(), build, recordingHost()).done).toEqual({ state: "stopped" });
  }, 60_000);

  it("check() accepts a good build and refuses a bad one with Python's errors", async () => {
    await runtime.check(build, ["handlers.py:on_post"]);
    const bad: BuildFiles = {
      id: "bld_bad",
      files: {
        "handlers.py": Buffer.from("def on_post(event):\n    pass\n").toString("base64"),
        "lib/broken.py": Buffer.from("def x(:\n").toString("base64"),
      },
    };
    await expect(
      runtime.check(bad, ["handlers.py:on_post", "handlers.py:gone"]),
    ).rejects.toMatchObject({
      code: "unprocessable",
      message: expect.stringMatching(/lib\/broken\.py:1: SyntaxError[\s\S]*"gone"/),
    });
  }, 30_000);
});
