/**
 * `npm run bench`: every figure of docs/performance.md in one run, each beside its floor from the
 * same run. Prints one table, writes bench/results/<time>.json and latest.json, and exits.
 */
import { cpus } from "node:os";
import { checkoutPython } from "../emulator/venv.ts";
import { REPO_ROOT } from "../src/platform/node.ts";
import type { Bench } from "./context.ts";
import type { LoadSpec } from "./load/generator.ts";
import { LoadClient } from "./load/remote.ts";
import { machine } from "./machine.ts";
import { acceptPhase } from "./phases/accept.ts";
import { activityPhase } from "./phases/activity.ts";
import { memoryPhase } from "./phases/memory.ts";
import { piecesPhase } from "./phases/pieces.ts";
import { sessionsPhase } from "./phases/sessions.ts";
import { syncPhase } from "./phases/sync.ts";
import { startService } from "./service.ts";
import { formatTable, ratioOf, writeResults } from "./table.ts";

/** The whole run may take this long; past it the process exits with what it has. */
const BUDGET_MS = 5 * 60_000;

async function main(): Promise<number> {
  const started = Date.now();
  const log = (line: string) =>
    process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  log("preparing the Python environment (first run: a few seconds)");
  const python = await checkoutPython(REPO_ROOT);
  // Durable sessions waiting in next_event give up their process after 100 ms (default 2 s), so
  // the parked-session phase does not wait 2 s per 32 sessions.
  const svc = await startService(python, { evictAfterMs: 100 });
  const client = await LoadClient.start();
  const b: Bench = {
    client,
    svc,
    python,
    log,
    rows: [],
    notes: [],
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
  try {
    const trivial = await svc.deploy("trivial");
    const activity = await svc.deploy("activity");
    const wait = await svc.deploy("wait");
    const probe = await svc.deploy("probe");
    log(`service at ${svc.url}, load client pid ${client.pid}`);

    const phases: [string, () => Promise<unknown>][] = [];
    let bareRps = Number.NaN;
    phases.push(["accept", async () => ({ bareRps } = await acceptPhase(b, trivial.hooks))]);
    phases.push(["sessions", () => sessionsPhase(b, trivial, bareRps)]);
    phases.push(["sync", () => syncPhase(b, trivial.hooks)]);
    phases.push(["activity", () => activityPhase(b, activity.hooks)]);
    phases.push(["memory", () => memoryPhase(b, wait)]);
    phases.push(["pieces", () => piecesPhase(b, { trivial, probe })]);
    // BENCH_PHASES=sync,activity runs only those (for iterating on one figure).
    const only = process.env.BENCH_PHASES?.split(",").filter(Boolean);
    for (const [name, run] of phases) {
      if (only && !only.includes(name)) continue;
      log(`phase ${name}`);
      try {
        await run();
        const m = process.memoryUsage();
        b.data[`${name}.serviceMemory`] = {
          heapUsed: m.heapUsed,
          heapTotal: m.heapTotal,
          rss: m.rss,
        };
      } catch (e) {
        log(`phase ${name} failed: ${e instanceof Error ? e.stack : e}`);
        b.data[`${name}.error`] = String(e);
      }
    }
  } finally {
    await client.dispose();
    await svc.close();
  }

  const table = formatTable(b.rows);
  process.stdout.write(`\n${table}\n`);
  if (b.notes.length) {
    process.stdout.write(`\nWhat the time goes to:\n${b.notes.join("\n")}\n`);
  }
  const path = writeResults({
    at: new Date().toISOString(),
    durationS: (Date.now() - started) / 1000,
    machine: machine(python),
    cores: cpus().length,
    rows: b.rows.map((r) => ({ ...r, ratio: ratioOf(r) })),
    notes: b.notes,
    data: b.data,
  });
  process.stdout.write(`\nresults: ${path} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  return 0; // nothing asserts timings: a target not met is a row in the table, not a failure
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
