/**
 * What one session's processes cost, without the service: `node --import tsx bench/session-cost.ts
 * [count] [concurrency] [fixture] [mode] [python version]`. A deployment-warm fork server of a fixture (`trivial`
 * unless named; its `handlers.py:on_sync` runs) as the service starts one) runs `count` sessions
 * driven as the service drives them (hello → start → outcome → done): each in a process of its
 * own (mode `fork`), or one after the other in `concurrency` processes with module state kept
 * (`reuse`, a `reuse_process: true` trigger) or the project's modules imported anew for each
 * (`modules`); with the Python of a pyenv version when one is named (`3.12`: a venv made with
 * this checkout's SDK). The figures are CPU ms and minor faults per session, from the server's own
 * counters and those of the children it reaped (/proc/<pid>/stat). CPU time and fault counts
 * hold up on a loaded machine where latencies do not, so this is the figure to compare runtime
 * changes by.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "../src/platform/node.ts";
import { ForkServer } from "../src/runtime/python/fork-server.ts";
import { serverEnv } from "../src/runtime/python/serve-process.ts";
import { checkoutPython } from "../test/support/python.ts";
import { cpuMs, ownTimes, procTimes } from "./cpu.ts";
import { summarize } from "./stats.ts";
import { venvFor } from "./venvs.ts";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}/`, import.meta.url));

/** How the sessions run: a process each, or one process after another with or without fresh modules. */
export type CostMode = "fork" | "reuse" | "modules";

function start(i: number, projectDir: string, mode: CostMode = "fork", last = true) {
  return {
    ...(mode !== "fork" && { reuse: !last, fresh_modules: mode === "modules" }),
    type: "start",
    session_id: `ses_cost${i}`,
    project_dir: projectDir,
    entry: "handlers.py:on_sync",
    event: {
      event_id: `evt_cost${i}`,
      session_id: `ses_cost${i}`,
      event_type: "post",
      data: {
        method: "POST",
        raw_url: "/webhooks/x",
        url: { path: "/webhooks/x", query: {}, path_suffix: "" },
        headers: { "Content-Type": "application/json" },
        body: { bytes: "eyJuIjoxfQ==", text: '{"n":1}', json: { n: 1 }, form: null },
      },
    },
    env: {},
    durable: false,
    journal: [],
    workflow_timeout: 10,
  };
}

/** One session over a socket from the server; resolves once its process has closed it. */
function session(socket: net.Socket, i: number, projectDir: string): Promise<boolean> {
  let buffered = "";
  let ok = false;
  socket.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const m = JSON.parse(buffered.slice(0, nl)) as { type: string; ok?: boolean };
      buffered = buffered.slice(nl + 1);
      if (m.type === "hello") socket.write(`${JSON.stringify(start(i, projectDir))}\n`);
      if (m.type === "done") {
        ok = m.ok === true;
        socket.end();
      }
    }
  });
  socket.on("error", () => {});
  socket.resume();
  return new Promise((resolve) => socket.once("close", () => resolve(ok)));
}

/**
 * `count` sessions one after the other over one process's socket (mode reuse or modules); each
 * one's time from its `start` to its `done`. Resolves once the process has closed the socket.
 */
function sessionsOn(socket: net.Socket, first: number, count: number, dir: string, mode: CostMode) {
  const times: number[] = [];
  let buffered = "";
  let i = 0;
  let sent = 0;
  let failed = 0;
  const next = () => {
    sent = performance.now();
    socket.write(`${JSON.stringify(start(first + i, dir, mode, i === count - 1))}\n`);
  };
  socket.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const m = JSON.parse(buffered.slice(0, nl)) as { type: string; ok?: boolean };
      buffered = buffered.slice(nl + 1);
      if (m.type === "hello") next();
      if (m.type !== "done") continue;
      times.push(performance.now() - sent);
      if (m.ok !== true) failed++;
      if (++i < count) next();
      else socket.end();
    }
  });
  socket.on("error", () => {});
  socket.resume();
  return new Promise<{ times: number[]; failed: number }>((resolve) =>
    socket.once("close", () => resolve({ times, failed: failed + count - i })),
  );
}

/** The phases of runner/faults.py, in order, and what each one's faults are. */
export const PHASES = [
  ["forked", "after fork (CPython's own, before the runner's first line)"],
  ["spare", "the spare's set-up (signals, limits, threads, capture, rehearsal)"],
  ["start", "hello → start read"],
  ["done", "start → done (import, handler, outcome)"],
  ["exit", "done → exit (the exit's teardown)"],
] as const;

/**
 * Median faults of each phase over the sessions HOOKLINE_FAULT_PHASES recorded in `file`:
 * each session's counts, less the phase before.
 * @example phaseFaults("/tmp/x/phases.ndjson").start // 112
 */
export function phaseFaults(file: string): Record<string, number> {
  const byPid = new Map<number, Record<string, number>>();
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const m = JSON.parse(line) as Record<string, number>;
    byPid.set(m.pid!, { ...byPid.get(m.pid!), ...m });
  }
  const whole = [...byPid.values()].filter((m) => PHASES.every(([p]) => p in m));
  const out: Record<string, number> = {};
  let before: string | null = null;
  for (const [phase] of PHASES) {
    const prev = before;
    out[phase] = summarize(whole.map((m) => m[phase]! - (prev ? m[prev]! : 0))).p50;
    before = phase;
  }
  return out;
}

/**
 * Runs `count` sessions at `concurrency` on a warm server; CPU (ms) and faults per session.
 * @example const cost = await sessionCost(python, 300, 1);
 */
export async function sessionCost(
  python: string,
  count: number,
  concurrency: number,
  name = "trivial",
  mode: CostMode = "fork",
) {
  const dir = fixture(name);
  const tmp = mkdtempSync(join(tmpdir(), "hl-cost-"));
  const phases = join(tmp, "phases.ndjson");
  const server = new ForkServer(python, {
    args: ["--warm-dir", dir, "--warm-modules", "handlers"],
    env: { ...serverEnv(process.env), HOOKLINE_FAULT_PHASES: phases },
  });
  const wall: number[] = [];
  try {
    for (let i = 0; i < 10; i++) await session(await server.connect(), i, dir); // warm-up
    const pid = server.pid!;
    rmSync(phases, { force: true }); // the warm-up's sessions are not counted
    const t0 = procTimes(pid);
    const own0 = ownTimes(pid);
    const wall0 = performance.now();
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        if (mode !== "fork") {
          const share = Math.ceil(count / concurrency);
          const r = await sessionsOn(await server.connect(), lane * share, share, dir, mode);
          wall.push(...r.times);
          failed += r.failed;
          return;
        }
        while (next < count) {
          const i = next++;
          const t = performance.now();
          if (!(await session(await server.connect(), i, dir))) failed++;
          wall.push(performance.now() - t);
        }
      }),
    );
    const wallMs = performance.now() - wall0;
    await new Promise((r) => setTimeout(r, 200)); // the last children reaped
    const t1 = procTimes(pid);
    const own1 = ownTimes(pid);
    const per = (a: number, b: number) => (b - a) / count;
    return {
      count,
      concurrency,
      failed,
      childUserMs: per(t0.childUser, t1.childUser),
      childSysMs: per(t0.childSys, t1.childSys),
      childMinflt: per(t0.childMinflt, t1.childMinflt),
      serverMs: cpuMs(t0, t1) / count,
      /** The fork server's own faults per session (one fork each): its pages write-protected by the fork. */
      serverMinflt: per(own0?.minflt ?? 0, own1?.minflt ?? 0),
      phases: phaseFaults(phases),
      sessionsPerS: count / (wallMs / 1000),
      wallP50Ms: summarize(wall).p50,
    };
  } finally {
    await server.dispose();
    if (process.env.KEEP_PHASES) process.stderr.write(`${phases}\n`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const version = process.argv[6];
  const python = version
    ? await venvFor(version, (line) => process.stderr.write(`${line}\n`))
    : await checkoutPython(REPO_ROOT);
  if (!python) throw new Error(`no Python ${version} under pyenv`);
  const count = Number(process.argv[2] ?? 300);
  const concurrency = Number(process.argv[3] ?? 1);
  const mode = (process.argv[5] ?? "fork") as CostMode;
  const r = await sessionCost(python, count, concurrency, process.argv[4], mode);
  const total = r.childUserMs + r.childSysMs + r.serverMs;
  process.stdout.write(
    `${r.count} sessions (${mode}), c=${r.concurrency}, ${r.failed} failed: per session ${total.toFixed(2)} ms CPU ` +
      `(session process user ${r.childUserMs.toFixed(2)} + sys ${r.childSysMs.toFixed(2)}, fork server ` +
      `${r.serverMs.toFixed(2)}), ${r.childMinflt.toFixed(0)} minor faults (fork server ${r.serverMinflt.toFixed(0)} more); ` +
      `${r.sessionsPerS.toFixed(0)} sessions/s; ${mode === "fork" ? "connect → closed" : "start → done"} p50 ${r.wallP50Ms.toFixed(2)} ms\n` +
      PHASES.map(([p, what]) => `  ${r.phases[p]?.toFixed(0).padStart(5)} ${what}\n`).join(""),
  );
}
