import { spawnSync } from "node:child_process";
import { type Bench, JSON_BODY } from "../context.ts";
import { type CpuSplit, cpuLine, cpuSplit } from "../cpu.ts";
import { type Floor, startPythonFloor } from "../floors.ts";
import { row, targetRow } from "../table.ts";
import { faultsRow } from "./sessions.ts";

/**
 * Flask is tried with the sessions' Python first, then with `python3` on PATH (the floor is
 * labelled with the one used); skipped when neither imports it.
 */
async function flaskFloor(
  python: string,
): Promise<{ floor: Floor; python: string } | { skipped: string }> {
  let skipped = "flask not installed";
  for (const exe of [python, "python3"]) {
    if (spawnSync(exe, ["-c", "import flask"], { stdio: "ignore" }).status !== 0) continue;
    const floor = await startPythonFloor(exe, "flask");
    if ("skipped" in floor) skipped = floor.skipped;
    else return { floor, python: exe };
  }
  return { skipped };
}

/**
 * Our sync round trip: latency at c=1, then sessions/s at c=16 with the CPU split over it.
 * `c16: false` measures c=1 only (the heavy fixture, the Python comparison).
 * @example const { c1 } = await measureSync(b, trivial.hooks.sync!);
 */
export async function measureSync(
  b: Bench,
  url: string,
  opts: { c16?: boolean; tag?: string } = {},
) {
  const tag = opts.tag ?? b.svc.label;
  const stop1 = cpuSplit(b.svc.pid, b.client.pid!);
  const c1 = await b.load(`sync.c1.${tag}`, {
    body: JSON_BODY,
    concurrency: 1,
    maxMs: 30_000,
    url,
    count: 300,
    warmup: 30,
  });
  await b.svc.idle(30_000);
  const cpu1 = stop1();
  b.data[`sync.c1.cpu.${tag}`] = cpu1;
  if (opts.c16 === false) return { c1, cpu1, c16: null, cpu: null };
  const stop = cpuSplit(b.svc.pid, b.client.pid!);
  const c16 = await b.load(`sync.c16.${tag}`, {
    body: JSON_BODY,
    concurrency: 16,
    maxMs: 40_000,
    url,
    count: 800,
    warmup: 48,
  });
  await b.svc.idle(30_000);
  b.data[`sync.cpu.${tag}`] = stop();
  return { c1, cpu1, c16, cpu: b.data[`sync.cpu.${tag}`] as CpuSplit };
}

/**
 * Sync round trip with a trivial handler (parse JSON, answer 201): latency at concurrency 1 and
 * sessions/s at concurrency 16, against the same logic in ThreadingHTTPServer (and Flask).
 */
export async function syncPhase(b: Bench, hooks: Record<string, string>) {
  const c1 = { body: JSON_BODY, concurrency: 1, maxMs: 30_000 };
  const c16 = { body: JSON_BODY, concurrency: 16, maxMs: 40_000 };
  const threading = await startPythonFloor(b.python, "threading");
  if ("skipped" in threading) throw new Error(`ThreadingHTTPServer floor: ${threading.skipped}`);
  let tp1: Awaited<ReturnType<Bench["load"]>>;
  let tp16: typeof tp1;
  try {
    tp1 = await b.load("sync.threading.c1", {
      ...c1,
      url: threading.url,
      count: 2000,
      warmup: 200,
    });
    tp16 = await b.load("sync.threading.c16", {
      ...c16,
      url: threading.url,
      count: 4000,
      warmup: 200,
    });
  } finally {
    await threading.close();
  }
  b.floors.syncP50 = tp1.latency.p50;
  b.floors.syncP99 = tp1.latency.p99;
  b.floors.syncRps = tp16.rps;
  const measured = await measureSync(b, hooks.sync!);
  const ours1 = measured.c1;
  const ours16 = measured.c16!;
  const cpu = measured.cpu!;
  b.figures[b.svc.label] = {
    ...b.figures[b.svc.label],
    syncP50: ours1.latency.p50,
    syncP99: ours1.latency.p99,
    syncRps: ours16.rps,
  };
  b.notes.push(`- sync c=16: ${cpuLine(cpu, ours16.completed, "sync session")}`);
  const bad = (r: typeof ours1) => r.completed - (r.statuses["201"] ?? 0) + r.errors;
  b.data["sync.non201"] = { c1: bad(ours1), c16: bad(ours16) };

  const tp = "ThreadingHTTPServer";
  b.rows.push(
    targetRow("sync round trip p50, c=1", "ms", ours1.latency.p50, tp1.latency.p50, tp, {
      limit: 2,
      below: true,
    }),
    targetRow("sync round trip p99, c=1", "ms", ours1.latency.p99, tp1.latency.p99, tp, {
      limit: 10,
      below: true,
    }),
    targetRow("sync sessions/s, c=16", "/s", ours16.rps, tp16.rps, tp, {
      limit: 400,
      below: false,
    }),
    faultsRow("faults per sync session, c=1", measured.cpu1, ours1.completed + 30),
    faultsRow("faults per sync session, c=16", cpu, ours16.completed + 48),
  );

  const flask = await flaskFloor(b.python);
  if ("skipped" in flask) {
    b.rows.push(
      row(
        "sync round trip p50 vs Flask",
        "ms",
        ours1.latency.p50,
        null,
        `skipped: ${flask.skipped}`,
      ),
    );
    b.data["sync.flask"] = flask;
    return;
  }
  try {
    const name = flask.python === b.python ? "Flask" : `Flask (${flask.python})`;
    const f1 = await b.load("sync.flask.c1", {
      ...c1,
      url: flask.floor.url,
      count: 1000,
      warmup: 100,
    });
    const f16 = await b.load("sync.flask.c16", {
      ...c16,
      url: flask.floor.url,
      count: 2000,
      warmup: 100,
    });
    b.rows.push(
      row("sync round trip p50, c=1, vs Flask", "ms", ours1.latency.p50, f1.latency.p50, name),
      row("sync round trip p99, c=1, vs Flask", "ms", ours1.latency.p99, f1.latency.p99, name),
      row("sync sessions/s, c=16, vs Flask", "/s", ours16.rps, f16.rps, name),
    );
  } finally {
    await flask.floor.close();
  }
}
