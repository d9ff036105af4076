import { execFileSync } from "node:child_process";
import type { Bench } from "../context.ts";
import { cpuLine, faultsPerSession } from "../cpu.ts";
import { startService } from "../service.ts";
import { PHASES, sessionCost } from "../session-cost.ts";
import { row } from "../table.ts";
import { PYENV, venvFor } from "../venvs.ts";
import { FAULTS_GOAL, measureBurst } from "./sessions.ts";
import { measureSync } from "./sync.ts";

/** Sessions per burst here: half the headline's, to keep each Python's turn short. */
const SESSIONS = 1000;

/**
 * BENCH_PYTHONS=3.12,3.13: the default configuration with each Python as the sessions'
 * interpreter, against the checkout's Python measured the same way in the same turn: sync p50 at
 * c=1 and async sessions completed/s (a burst of SESSIONS), with the CPU split per session.
 * @example await pythonsPhase(b, ["3.12", "3.13"]);
 */
export async function pythonsPhase(b: Bench, versions: string[]) {
  const version = (py: string) =>
    execFileSync(py, ["-c", "import platform; print(platform.python_version())"], {
      encoding: "utf8",
    }).trim();
  const runs: { label: string; python: string }[] = [
    { label: `Python ${version(b.python)}`, python: b.python },
  ];
  for (const v of versions) {
    const python = await venvFor(v, b.log);
    if (python) runs.push({ label: `Python ${version(python)}`, python });
    else b.notes.push(`- Python ${v}: not under ${PYENV}, skipped`);
  }
  const results: Record<
    string,
    { syncP50: number; syncP99: number; sessionsRate: number; faults: number; forked: number }
  > = {};
  for (const run of runs) {
    const svc = await startService({ python: run.python, label: run.label });
    try {
      const pb: Bench = { ...b, svc, python: run.python };
      const trivial = await svc.deploy("trivial");
      const { c1 } = await measureSync(pb, trivial.hooks.sync!, { c16: false });
      const burst = await measureBurst(pb, trivial, SESSIONS);
      // A session in a process of its own (a durable one's, or the first of a process), phase by phase.
      const cost = await sessionCost(run.python, 200, 1, "trivial", "fork");
      results[run.label] = {
        syncP50: c1.latency.p50,
        syncP99: c1.latency.p99,
        sessionsRate: burst.completedRate,
        faults: faultsPerSession(burst.cpu, SESSIONS),
        forked: cost.childMinflt + cost.serverMinflt,
      };
      b.notes.push(
        `- ${run.label}, async burst: ${cpuLine(burst.cpu, SESSIONS, "async session")}`,
        `- ${run.label}, a session in a process of its own (no service, c=1, 200): ` +
          `${cost.childMinflt.toFixed(0)} minor faults in its process and ${cost.serverMinflt.toFixed(0)} in the fork server; ` +
          `by phase (median): ${PHASES.map(([p, what]) => `${what} ${cost.phases[p]?.toFixed(0)}`).join(", ")}`,
      );
    } finally {
      await svc.close();
    }
  }
  b.data.pythons = results;
  const [base, ...others] = runs.map((r) => r.label);
  const ref = results[base!]!;
  for (const label of [base!, ...others]) {
    const r = results[label]!;
    const vs = `${base} (same turn)`;
    b.rows.push(
      row(
        `${label}: sync round trip p50, c=1`,
        "ms",
        r.syncP50,
        ref.syncP50,
        vs,
        "< 2 ms",
        (v) => v < 2,
      ),
      row(`${label}: sync round trip p99, c=1`, "ms", r.syncP99, ref.syncP99, vs),
      row(
        `${label}: async sessions completed/s, N=${SESSIONS}`,
        "/s",
        r.sessionsRate,
        ref.sessionsRate,
        vs,
        "≥ 400/s",
        (v) => v >= 400,
      ),
      row(
        `${label}: faults per async session (session process + fork server)`,
        "",
        r.faults,
        ref.faults,
        vs,
        "≤ 250",
        (v) => v < FAULTS_GOAL.limit,
      ),
      row(`${label}: faults per session in a process of its own`, "", r.forked, ref.forked, vs),
    );
  }
}
