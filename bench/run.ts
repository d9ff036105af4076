/**
 * `npm run bench`: every figure of docs/performance.md in one run, each beside its floor from the
 * same run, for the configuration a user gets from the README: `cli up --mode dev` in its own
 * process with the default storage. Then the main figures again with memory storage, to show how
 * far it is from the default. Prints one table, writes bench/results/<time>.json and latest.json.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "../src/platform/node.ts";
import { checkoutPython } from "../test/support/python.ts";
import type { Bench } from "./context.ts";
import { cpuLine } from "./cpu.ts";
import type { LoadSpec } from "./load/generator.ts";
import { LoadClient } from "./load/remote.ts";
import { machine } from "./machine.ts";
import { abPhase } from "./phases/ab.ts";
import { type AcceptFloors, acceptPhase } from "./phases/accept.ts";
import { activityPhase } from "./phases/activity.ts";
import { calibratePhase, costsLine, type MachineCosts } from "./phases/calibrate.ts";
import { cliPhase } from "./phases/cli.ts";
import { heavyPhase } from "./phases/heavy.ts";
import { mainFigures, storageRows } from "./phases/main-figures.ts";
import { memoryPhase } from "./phases/memory.ts";
import { peersPhase } from "./phases/peers.ts";
import { piecesPhase } from "./phases/pieces.ts";
import { postgresPhase } from "./phases/postgres.ts";
import { pythonsPhase } from "./phases/pythons.ts";
import { ASYNC_SESSIONS, sessionsPhase } from "./phases/sessions.ts";
import { storeGrowthPhase } from "./phases/store-growth.ts";
import { syncPhase } from "./phases/sync.ts";
import { tracingPhase } from "./phases/tracing.ts";
import { cpuProfArgs, summarizeProfile } from "./profile.ts";
import { configWhere, type Service, startService } from "./service.ts";
import { formatTable, ratioOf, writeResults } from "./table.ts";

/** The whole run may take this long (BENCH_PYTHONS adds to it); past it the process exits. */
const BUDGET_MS =
  ((process.env.BENCH_PYTHONS ? 17 : 11) + (process.env.BENCH_PEERS === "1" ? 20 : 0)) * 60_000;
const DEFAULT = "default storage";
const MEMORY = "memory storage";
const IDLE_ENV = { SVC_SESSION_PRIORITY: "idle" };
const IDLE = "SVC_SESSION_PRIORITY=idle";
const FRONT_OFF_ENV = { SVC_FRONT_THREAD: "off" };
const FRONT_OFF = "SVC_FRONT_THREAD=off";
const results = fileURLToPath(new URL("./results/", import.meta.url));
/**
 * Durable sessions waiting in next_event give up their process after 100 ms (default 2 s), so
 * the parked-session phase does not wait 2 s per 32 sessions. Set as a user would: SVC_*.
 */
const EVICT = { SVC_EVICT_AFTER: "0.1" };

async function phase(b: Bench, name: string, run: () => Promise<unknown>) {
  // BENCH_PHASES=sync,heavy runs only those (for iterating on one figure); the machine's
  // calibration runs always: every other figure is read against it.
  const only = process.env.BENCH_PHASES?.split(",").filter(Boolean);
  if (only && name !== "machine" && !only.includes(name)) return;
  b.log(`phase ${name}`);
  try {
    await run();
  } catch (e) {
    b.log(`phase ${name} failed: ${e instanceof Error ? e.stack : e}`);
    b.data[`${name}.error`] = String(e);
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const load0 = loadavg();
  const log = (line: string) =>
    process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  log("preparing the Python environment (first run: a few seconds)");
  // The checkout's venv, given to `cli up` as SVC_WORKER_PYTHON: a user's first `cli up` makes a
  // venv under its data home instead (once, seconds); the sessions' interpreter is the same.
  const python = await checkoutPython(REPO_ROOT);
  // BENCH_PROFILE=1: the default service runs under `node --cpu-prof` (written at its exit).
  const profileDir =
    process.env.BENCH_PROFILE === "1" ? mkdtempSync(join(tmpdir(), "hookline-bench-prof-")) : null;
  const client = await LoadClient.start();
  let svc: Service = await startService({
    python,
    label: DEFAULT,
    env: EVICT,
    nodeArgs: profileDir ? cpuProfArgs(profileDir) : [],
  });
  const b: Bench = {
    client,
    svc,
    python,
    log,
    rows: [],
    notes: [],
    figures: {},
    floors: {},
    data: {},
    async load(name: string, spec: LoadSpec) {
      const result = await client.run(spec);
      const { details: _, ...kept } = result;
      b.data[name] = kept;
      log(
        `${name}: ${result.completed} ok, ${result.errors} errors, p50 ${result.latency.p50.toFixed(3)} ms, ` +
          `p99 ${result.latency.p99.toFixed(3)} ms, ${result.rps.toFixed(0)} req/s`,
      );
      return result;
    },
  };
  let where: ReturnType<typeof configWhere> | null = null;
  let costs: MachineCosts | undefined;
  try {
    const trivial = await svc.deploy("trivial");
    const activity = await svc.deploy("activity");
    const wait = await svc.deploy("wait");
    const probe = await svc.deploy("probe");
    const heavy = await svc.deploy("heavy");
    where = configWhere(svc);
    log(`service pid ${svc.pid} at ${svc.url}, load client pid ${client.pid}`);
    log(`storage: ${where.engine}`);

    await phase(b, "machine", async () => {
      costs = calibratePhase(b);
    });
    await phase(b, "cli", async () => cliPhase(b));
    let floors: AcceptFloors = { bareRps: Number.NaN, durableRps: Number.NaN };
    await phase(b, "accept", async () => {
      floors = await acceptPhase(b, trivial.hooks);
    });
    const { bareRps } = floors;
    await phase(b, "sessions", () => sessionsPhase(b, trivial, floors));
    await phase(b, "sync", () => syncPhase(b, trivial.hooks));
    await phase(b, "heavy", () => heavyPhase(b, heavy));
    await phase(b, "activity", () => activityPhase(b, activity.hooks));
    await phase(b, "memory", () => memoryPhase(b, wait));
    await phase(b, "pieces", () => piecesPhase(b, { probe }));
    await phase(b, "reuse", async () => {
      // The same handlers with reuse_process: true, deployed now: the A/B runs after the
      // phases above, whose figures it leaves as they were.
      const trivialReuse = await svc.deploy("trivial", "reuse.yaml");
      const heavyReuse = await svc.deploy("heavy", "reuse.yaml");
      const base = { name: "default", bench: b, trivial, heavy };
      const reuse = { name: "reuse_process", bench: b, trivial: trivialReuse, heavy: heavyReuse };
      await abPhase(b, base, reuse, bareRps);
    });
    // The container image's setting (Dockerfile): sessions at SCHED_IDLE, on a service of its own;
    // and the same service with webhooks on the sessions' thread (src/front/: the front door off).
    for (const [name, label, env] of [
      ["priority", IDLE, IDLE_ENV],
      ["front", FRONT_OFF, FRONT_OFF_ENV],
    ] as const) {
      await phase(b, name, async () => {
        const other = await startService({ python, label, env: { ...EVICT, ...env } });
        try {
          const ob: Bench = { ...b, svc: other };
          const [t, h] = [await other.deploy("trivial"), await other.deploy("heavy")];
          const base = { name: "default", bench: b, trivial, heavy };
          await abPhase(b, base, { name: label, bench: ob, trivial: t, heavy: h }, bareRps);
        } finally {
          await other.close();
        }
      });
    }
    // BENCH_PEERS=1: Restate and n8n on loopback, installed into bench/.peers/ on first use.
    if (process.env.BENCH_PEERS === "1") await phase(b, "peers", () => peersPhase(b, DEFAULT));
    await svc.close();
    if (profileDir) {
      const p = summarizeProfile(profileDir, join(results, "profile-service.cpuprofile.json"));
      rmSync(profileDir, { recursive: true, force: true });
      if (p) {
        b.data.profile = p;
        b.notes.push(
          `- CPU profile of the service's main thread, whole run (${p.file}; busy ${p.busyMs.toFixed(0)} ms, idle ` +
            `${p.idleMs.toFixed(0)} ms): ${p.areas.map((a) => `${a.area} ${a.pct.toFixed(0)} %`).join(", ")}. Top self time: ` +
            `${p.top.map((f) => `${f.fn} ${f.pct.toFixed(1)} %`).join("; ")}`,
        );
      }
    }

    // The same main figures with memory storage: a secondary service, started after.
    await phase(b, "storage", async () => {
      svc = await startService({
        python,
        label: MEMORY,
        env: { ...EVICT, SVC_STORAGE: "memory:" },
      });
      const mb: Bench = { ...b, svc };
      try {
        const memTrivial = await svc.deploy("trivial");
        const { burst } = await mainFigures(mb, memTrivial, ASYNC_SESSIONS);
        b.notes.push(
          `- async burst, ${MEMORY}: ${cpuLine(burst.cpu, ASYNC_SESSIONS, "async session")}`,
        );
        storageRows(b, DEFAULT, MEMORY);
      } finally {
        await svc.close();
      }
    });

    // PostgreSQL coordinating a fleet of two, Redis as the bus (docs/scale-out.md), beside the
    // embedded default: needs DATABASE_URL and REDIS_URL.
    await phase(b, "postgres", () => postgresPhase(b, b.figures[DEFAULT]?.acceptP50));
    await phase(b, "growth", () => storeGrowthPhase(b));

    // Tracing off and on, each on services of its own (docs/observability.md, "What it costs").
    await phase(b, "tracing", () => tracingPhase(b));

    const pythons = process.env.BENCH_PYTHONS?.split(",").filter(Boolean);
    if (pythons?.length) await phase(b, "pythons", () => pythonsPhase(b, pythons));
  } finally {
    await client.dispose();
    await svc.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  }

  const load1 = loadavg();
  const header = [
    costsLine(costs),
    `service: \`node bin/cli.mjs up --mode dev --port 0\` in its own process, fresh XDG homes, SVC_WORKER_PYTHON=${python} (skips the venv a first \`cli up\` makes), SVC_EVICT_AFTER=${EVICT.SVC_EVICT_AFTER} (the parked phase); memory storage: a second service started after, SVC_STORAGE=memory:`,
    `storage of the headline rows (default): ${where?.engine ?? "unknown"}`,
    `\`cli config where\`: ${where?.lines.join(" | ") ?? "–"}`,
    `load average (1, 5, 15 min): ${fmtLoad(load0)} at the start, ${fmtLoad(load1)} at the end, on ${cpus().length} cores`,
  ];
  process.stdout.write(`\n${header.join("\n")}\n\n${formatTable(b.rows)}\n`);
  // The targets alone, from the rows above.
  const targets = b.rows.filter((r) => r.target && r.met !== null);
  process.stdout.write(`\nTargets:\n${formatTable(targets)}\n`);
  if (b.notes.length) process.stdout.write(`\nWhat the time goes to:\n${b.notes.join("\n")}\n`);
  const path = writeResults({
    at: new Date().toISOString(),
    durationS: (Date.now() - started) / 1000,
    machine: machine(python),
    cores: cpus().length,
    loadavg: { start: load0, end: load1 },
    storage: where,
    commit: commit(),
    rows: b.rows.map((r) => ({ ...r, ratio: ratioOf(r) })),
    figures: b.figures,
    floors: b.floors,
    notes: b.notes,
    data: b.data,
  });
  process.stdout.write(`\nresults: ${path} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  return 0; // nothing asserts timings: a target not met is a row in the table, not a failure
}

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }).trim();
  } catch {
    return "unknown";
  }
}

function fmtLoad(l: number[]): string {
  return l.map((v) => v.toFixed(2)).join(", ");
}

const watchdog = setTimeout(() => {
  process.stderr.write(`bench: over the ${BUDGET_MS / 1000} s budget, exiting\n`);
  process.exit(2);
}, BUDGET_MS);
watchdog.unref();

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : e}\n`);
    process.exit(1);
  },
);
