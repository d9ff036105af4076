import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPython } from "../../../test/support/python.ts";
import {
  type RecordingHost,
  recordingHost,
  testEvent,
  testSpec,
} from "../../../test/support/test-host.ts";
import { until } from "../../../test/support/until.ts";
import type { BuildFiles } from "../../model/records.ts";
import type { SessionSpec } from "../runtime.ts";
import type { ForkServer } from "./fork-server.ts";
import { type ReuseOptions, ReusePool } from "./reuse.ts";
import { alive } from "./run-dirs.ts";
import { createPythonRuntime, type PythonRuntime } from "./runtime.ts";

const HANDLERS = `
import os, sys, threading, time
from workflow_sdk import http_outcome

print("imported")
STATE = {"n": 0}

def on_do(event):
    """What the event's body names: count (the default), crash, fail, loop, spin, hog, thread."""
    what = event.data.body.text
    STATE["n"] += 1
    print(f"n={STATE['n']} pid={os.getpid()} body={what} sid={event.session_id}")
    if what == "crash":
        os.kill(os.getpid(), 9)
    if what == "fail":
        raise KeyError("missing")
    while what == "loop":
        time.sleep(0.05)
    while what == "spin":
        pass
    if what == "hog":
        blocks = [bytearray(16 * 1024 * 1024) for _ in range(32)]
        print("still here", len(blocks))
    if what == "thread":
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    print("secret=" + os.environ.get("SECRET", "-"), "left=" + os.environ.get("LEFT", "-"), file=sys.stderr)
    os.environ["SECRET"] = "changed by a session"
    os.environ["LEFT"] = "by a session"
    os.write(1, f"fd {what}".encode())  # straight to the descriptor, no newline
    http_outcome(200, body=str(STATE["n"]))
`;

const build: BuildFiles = {
  id: "bld_reuse_test",
  files: { "handlers.py": Buffer.from(HANDLERS).toString("base64") },
};

interface Seen {
  n: number;
  pid: number;
  body: string;
  sid: string;
}

/** What `on_count` printed: its counter, pid, body and session id. */
function seen(host: RecordingHost): Seen {
  const line = host.prints.find((p) => p.text.startsWith("n="))!.text;
  const m = /^n=(\d+) pid=(\d+)(?: body=(\S*) sid=(\S*))?/.exec(line)!;
  return { n: Number(m[1]), pid: Number(m[2]), body: m[3] ?? "", sid: m[4] ?? "" };
}

const spec = (over: Partial<SessionSpec> = {}, what = "count") =>
  testSpec({
    entry: "handlers.py:on_do",
    reuseProcess: true,
    env: { SECRET: "s1" },
    event: eventWith(what, over.sessionId ?? "ses_01"),
    ...over,
  });

/** A socket pair's service end, as a process the pool keeps; `python` is the process's end. */
async function fakeProcess(pid: number) {
  const dir = await mkdtemp(join(tmpdir(), "hl-pool-"));
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(join(dir, "s"), r));
  const accepted = new Promise<net.Socket>((r) => server.once("connection", r));
  const python = net.createConnection(join(dir, "s"));
  const socket = await accepted;
  python.on("error", () => {});
  server.close();
  const closed = new Promise<void>((r) => python.once("close", () => r()));
  return { socket, python, closed, pid, from: {} as ForkServer, sessions: 1, dir };
}

describe("ReusePool", () => {
  const made: Awaited<ReturnType<typeof fakeProcess>>[] = [];
  afterAll(async () => {
    for (const p of made) {
      p.python.destroy();
      p.socket.destroy();
      await rm(p.dir, { recursive: true, force: true });
    }
  });
  const proc = async (pid: number) => {
    const p = await fakeProcess(pid);
    made.push(p);
    return p;
  };
  const gone = (p: Awaited<ReturnType<typeof fakeProcess>>) => p.socket.destroyed;

  it("keeps nothing for a session without the option, a durable or a resumed one", () => {
    const pool = new ReusePool();
    const journal = [{ seq: 0, kind: "outcome" as const }];
    for (const over of [{ reuseProcess: false }, { durable: true }, { journal }]) {
      expect(pool.staysAfter(spec(over), null)).toBe(false);
      expect(pool.take(spec(over))).toBeNull();
    }
    expect(pool.staysAfter(spec(), null)).toBe(true);
  });

  it("keeps maxIdle per deployment and entry, hands the last one back first", async () => {
    const pool = new ReusePool({ maxIdle: 2 });
    pool.take(spec()); // the project's current deployment
    const [a, b, c] = [await proc(1), await proc(2), await proc(3)];
    for (const p of [a, b, c]) pool.give(spec(), p);
    expect([gone(a), gone(b), gone(c), pool.size]).toEqual([false, false, true, 2]);
    expect(pool.take(spec({ entry: "handlers.py:other" }))).toBeNull();
    expect(pool.take(spec())?.pid).toBe(2);
    expect(pool.take(spec())?.pid).toBe(1);
    expect(pool.take(spec())).toBeNull();
  });

  it("ends the one idle longest past maxIdleTotal, and another project's never serves", async () => {
    const pool = new ReusePool({ maxIdleTotal: 2 });
    const other = { projectId: "prj_02", buildId: "bld_02" };
    pool.take(spec());
    pool.take(spec(other));
    const [a, b, c] = [await proc(1), await proc(2), await proc(3)];
    pool.give(spec(), a);
    pool.give(spec(other), b);
    pool.give(spec(), c);
    expect([gone(a), gone(b), gone(c)]).toEqual([true, false, false]);
    expect(pool.take(spec(other))?.pid).toBe(2);
    expect(pool.take(spec(other))).toBeNull();
  });

  it("ends a project's idle processes of an older deployment or vars", async () => {
    const pool = new ReusePool();
    pool.take(spec());
    const [a, b] = [await proc(1), await proc(2)];
    pool.give(spec(), a);
    pool.replaced("prj_01", "anything newer");
    expect([gone(a), pool.size]).toEqual([true, 0]);
    // A session of the older deployment that ends now does not keep its process either.
    pool.give(spec(), b);
    expect(gone(b)).toBe(true);
    const c = await proc(3);
    expect(pool.take(spec({ env: { SECRET: "new" } }))).toBeNull();
    pool.give(spec({ env: { SECRET: "new" } }), c);
    expect(pool.take(spec())).toBeNull(); // the old vars' session: none of the new ones' processes
    expect(gone(c)).toBe(true); // … and it made the old deployment current again
  });

  it("drops a process that dies or speaks while idle", async () => {
    const pool = new ReusePool();
    pool.take(spec());
    const [a, b] = [await proc(1), await proc(2)];
    pool.give(spec(), a);
    pool.give(spec(), b);
    a.python.destroy();
    b.python.write('{"type":"print","text":"late","stream":"stdout"}\n');
    await Promise.all([a.closed, b.closed]);
    await new Promise((r) => setTimeout(r, 20));
    expect([pool.size, pool.take(spec())]).toEqual([0, null]);
  });
});

describe("reused processes (reuse_process: true), real Python", () => {
  let python: string;
  let dataHome: string;
  const runtimes: PythonRuntime[] = [];

  beforeAll(async () => {
    python = await testPython();
    dataHome = await mkdtemp(join(tmpdir(), "hl-reuse-"));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(runtimes.map((r) => r.dispose()));
    if (dataHome) await rm(dataHome, { recursive: true, force: true });
  });

  function runtime(reuse: Partial<ReuseOptions> = {}, memoryMib = 0) {
    const rt = createPythonRuntime({
      dataHome,
      python: async () => python,
      stopGraceMs: 300,
      reuse,
      ...(memoryMib && { limits: { memoryMib, files: 0, cpuSeconds: 0, processes: 0 } }),
    });
    runtimes.push(rt);
    return rt;
  }

  async function count(rt: PythonRuntime, over: Partial<SessionSpec> = {}, what = "count") {
    const host = recordingHost(spec(over));
    const end = await rt.run(spec(over, what), build, host).done;
    expect(end).toEqual({ state: "completed" });
    return { host, ...seen(host) };
  }

  /** A session of `what` on `rt`: its run and its host. */
  function session(rt: PythonRuntime, what: string, over: Partial<SessionSpec> = {}) {
    const host = recordingHost();
    return { host, run: rt.run(spec(over, what), build, host) };
  }

  it("keeps module state between sessions; each gets its own prints, event and vars", async () => {
    const rt = runtime();
    const one = await count(rt, { sessionId: "ses_1" }, "one");
    const two = await count(rt, { sessionId: "ses_2" }, "two");
    expect([one.n, two.n]).toEqual([1, 2]);
    expect(two.pid).toBe(one.pid);
    // What went to fd 1 comes through its pipe: its place among the other lines may vary.
    const sorted = (h: RecordingHost) => [...h.prints].sort((a, b) => (a.text < b.text ? -1 : 1));
    expect(sorted(one.host)).toEqual([
      { text: "fd one", stream: "stdout" },
      { text: "imported", stream: "stdout" },
      { text: `n=1 pid=${one.pid} body=one sid=ses_1`, stream: "stdout" },
      { text: "secret=s1 left=-", stream: "stderr" },
    ]);
    // The second session's own lines only; the vars as the deployment set them.
    expect(sorted(two.host)).toEqual([
      { text: "fd two", stream: "stdout" },
      { text: `n=2 pid=${one.pid} body=two sid=ses_2`, stream: "stdout" },
      { text: "secret=s1 left=-", stream: "stderr" },
    ]);
    expect(two.host.outcomes.map((o) => o.body?.toString())).toEqual(["2"]);
    expect(two.host.starts).toBe(1);
    // What /metrics reads: the process idle again, one session fresh and one reused.
    const { idleReusedProcesses, reuseSessions } = rt.gauges();
    expect([idleReusedProcesses, reuseSessions]).toEqual([1, { reused: 1, fresh: 1 }]);
  }, 60_000);

  it("runs each session afresh without the option, and for durable sessions", async () => {
    const rt = runtime();
    const plain = [
      await count(rt, { reuseProcess: false }),
      await count(rt, { reuseProcess: false }),
    ];
    expect(plain.map((s) => s.n)).toEqual([1, 1]);
    const durable = [await count(rt, { durable: true }), await count(rt, { durable: true })];
    expect(durable.map((s) => s.n)).toEqual([1, 1]);
    expect(durable[0]!.pid).not.toBe(durable[1]!.pid);
    // Sessions that may not reuse are not counted among those that might.
    expect(rt.gauges().reuseSessions).toEqual({ reused: 0, fresh: 0 });
  }, 60_000);

  it("a session that crashes, fails or leaves a thread ends its process: the next is fresh", async () => {
    const rt = runtime();
    const ends = { crash: "crashed", fail: "error", thread: "completed" };
    for (const [what, state] of Object.entries(ends)) {
      const first = await count(rt);
      const { host, run } = session(rt, what);
      expect((await run.done).state, what).toBe(state);
      expect(seen(host).pid, what).toBe(first.pid); // it ran on the reused process
      const next = await count(rt);
      expect([next.n, next.pid === first.pid], what).toEqual([1, false]);
    }
  }, 60_000);

  it("stop and the workflow timeout still end a reused session, and its process", async () => {
    const rt = runtime();
    const first = await count(rt);
    const looping = session(rt, "loop");
    while (!looping.host.prints.length) await new Promise((r) => setTimeout(r, 10));
    expect(seen(looping.host)).toMatchObject({ n: 2, pid: first.pid });
    await looping.run.stop();
    expect(await looping.run.done).toEqual({ state: "stopped" });
    const second = await count(rt);
    expect([second.n, second.pid === first.pid]).toEqual([1, false]);

    const spun = session(rt, "spin", { workflowTimeoutMs: 300 });
    expect(await spun.run.done).toMatchObject({
      state: "error",
      message: expect.stringContaining("more than 0.3 s outside an activity"),
    });
    expect(seen(spun.host).pid).toBe(second.pid);
    const third = await count(rt);
    expect([third.n, third.pid === second.pid]).toEqual([1, false]);
  }, 60_000);

  it("the memory limit still applies to a reused process", async () => {
    const rt = runtime({}, 128);
    const first = await count(rt);
    const hog = session(rt, "hog");
    const end = await hog.run.done;
    expect(seen(hog.host).pid).toBe(first.pid);
    expect(end.state).toBe("error");
    expect(end.state === "error" && end.message).toMatch(/memory limit of 128 MiB/);
    const next = await count(rt);
    expect([next.n, next.pid === first.pid]).toEqual([1, false]);
  }, 60_000);

  it("a new deployment or new vars never get an older one's process", async () => {
    const rt = runtime();
    const a = await count(rt);
    expect((await count(rt)).pid).toBe(a.pid);
    const redeployed = { ...build, id: "bld_reuse_test_2" };
    const host = recordingHost();
    const b = rt.run(spec({ buildId: redeployed.id }), redeployed, host);
    expect(await b.done).toEqual({ state: "completed" });
    expect(seen(host)).toMatchObject({ n: 1 });
    expect(seen(host).pid).not.toBe(a.pid);
    // The older deployment's idle process ended when the new one's first session began.
    while (alive(a.pid)) await new Promise((r) => setTimeout(r, 20));
    const c = await count(rt, { env: { SECRET: "s2" } });
    expect([c.n, c.pid === a.pid, c.pid === seen(host).pid]).toEqual([1, false, false]);
    expect(c.host.prints.map((p) => p.text)).toContain("secret=s2 left=-");
  }, 60_000);

  it("runs every session above the pool's bounds; a process runs at most maxSessions", async () => {
    const rt = runtime({ maxIdle: 2, maxSessions: 3 });
    const runs = Array.from({ length: 12 }, (_, i) => {
      const host = recordingHost();
      const run = rt.run(spec({ sessionId: `ses_${i}` }), build, host);
      return run.done.then((end) => ({ end, host }));
    });
    const ends = await Promise.all(runs);
    expect(ends.map((e) => e.end.state)).toEqual(Array(12).fill("completed"));
    const counts: number[] = [];
    for (let i = 0; i < 8; i++) counts.push((await count(rt)).n);
    expect(Math.max(...counts)).toBe(3);
  }, 120_000);

  it("an idle process ends after idleMs", async () => {
    const rt = runtime({ idleMs: 200 });
    const a = await count(rt);
    // Its end waited for (the deadline only ends the wait), not a set time slept.
    await until("the idle process to end after idleMs", () => !alive(a.pid), 30_000);
    const b = await count(rt);
    expect([b.n, b.pid === a.pid]).toEqual([1, false]);
  }, 60_000);
});

function eventWith(body: string, sessionId: string): SessionSpec["event"] {
  const e = testEvent(body);
  return { ...e, session_id: sessionId };
}
