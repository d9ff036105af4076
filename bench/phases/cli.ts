import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Bench } from "../context.ts";
import { targetRow } from "../table.ts";

const script = fileURLToPath(new URL("../cli_time.py", import.meta.url));
const cli = fileURLToPath(new URL("../../bin/cli.mjs", import.meta.url));
const RUNS = 7;

interface Timed {
  cmd: string[];
  best_wall_ms: number;
  median_cpu_ms: number;
}

/**
 * `cli --help`, `cli session list` and `cli trigger list` (against the service under test) beside
 * `node -e 0`: best wall time of 7 and median CPU. Target: at most 2× node's start, with the
 * lists' own work (one request) in their figure.
 * @example await cliPhase(b);
 */
export function cliPhase(b: Bench) {
  const commands = [["-e", "0"], ["--help"], ["session", "list"], ["trigger", "list"]];
  const args = commands.flatMap((c) => ["--", "node", ...(c[0] === "-e" ? c : [cli, ...c])]);
  const timed = JSON.parse(
    execFileSync(b.python, [script, String(RUNS), ...args], {
      encoding: "utf8",
      env: { ...b.svc.env, SVC_URL: b.svc.url },
      timeout: 300_000,
    }),
  ) as Timed[];
  b.data.cli = timed;
  const [node, ...rest] = timed;
  for (const [i, t] of rest.entries()) {
    const name = `cli ${commands[i + 1]!.join(" ")}`;
    for (const [what, key] of [
      ["start, best wall of 7", "best_wall_ms"],
      ["CPU, median of 7", "median_cpu_ms"],
    ] as const) {
      b.rows.push(
        targetRow(
          `${name}: ${what}`,
          "ms",
          t[key],
          node![key],
          "node -e 0",
          { limit: 2, below: true, on: "ratio" },
          { text: "≤ 2× node -e 0" },
        ),
      );
    }
  }
}
