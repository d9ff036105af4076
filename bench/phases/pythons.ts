import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ensureVenv } from "../../emulator/venv.ts";
import { REPO_ROOT } from "../../src/platform/node.ts";
import type { Bench } from "../context.ts";
import { cpuLine } from "../cpu.ts";
import { startService } from "../service.ts";
import { row } from "../table.ts";
import { measureBurst } from "./sessions.ts";
import { measureSync } from "./sync.ts";

const PYENV = "/root/.pyenv/versions";
/** Sessions per burst here: half the headline's, to keep each Python's turn short. */
const SESSIONS = 1000;

/** The pyenv interpreter for "3.12" (the newest 3.12.x there), or null. */
function pyenvPython(version: string): string | null {
  if (!existsSync(PYENV)) return null;
  const dirs = readdirSync(PYENV)
    .filter((d) => d === version || d.startsWith(`${version}.`))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const dir = dirs.at(-1);
  return dir ? join(PYENV, dir, "bin", "python3") : null;
}

/** A venv per version under node_modules/.cache, made offline with this checkout's SDK. */
async function venvFor(version: string, log: (line: string) => void): Promise<string | null> {
  const base = pyenvPython(version);
  if (!base) return null;
  return ensureVenv({
    venvDir: join(REPO_ROOT, "node_modules", ".cache", `hookline-bench-venv-${version}`),
    repoRoot: REPO_ROOT,
    basePython: base,
    preinstall: false,
    onProgress: log,
  });
}

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
  const results: Record<string, { syncP50: number; syncP99: number; sessionsRate: number }> = {};
  for (const run of runs) {
    const svc = await startService({ python: run.python, label: run.label });
    try {
      const pb: Bench = { ...b, svc, python: run.python };
      const trivial = await svc.deploy("trivial");
      const { c1 } = await measureSync(pb, trivial.hooks.sync!, { c16: false });
      const burst = await measureBurst(pb, trivial, SESSIONS);
      results[run.label] = {
        syncP50: c1.latency.p50,
        syncP99: c1.latency.p99,
        sessionsRate: burst.completedRate,
      };
      b.notes.push(`- ${run.label}, async burst: ${cpuLine(burst.cpu, SESSIONS, "async session")}`);
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
    );
  }
}
