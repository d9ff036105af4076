import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Bench } from "../context.ts";
import { row } from "../table.ts";

const script = fileURLToPath(new URL("../calibrate.py", import.meta.url));

/** What bench/calibrate.py measures: the machine's price of what a session's process pays. */
export interface MachineCosts {
  cow_fault_us: number;
  zero_fault_us: number;
  fork_exit_ms: number;
  pipe_rtt_us: number;
  python: string;
}

/**
 * The machine first: a copy-on-write fault, a zero-fill fault, fork + exit + wait of a warm
 * interpreter and a pipe round trip, with the sessions' Python. Every session figure after it
 * moves with these (docs/performance.md, "The machine"); rows without a target.
 * @example const costs = calibratePhase(b); costs.cow_fault_us // 44
 */
export function calibratePhase(b: Bench): MachineCosts {
  const costs = JSON.parse(
    execFileSync(b.python, [script], { encoding: "utf8", timeout: 120_000 }),
  ) as MachineCosts;
  b.data.machineCosts = costs;
  const what = "what this machine charges";
  b.rows.push(
    row("machine: a copy-on-write fault", "µs", costs.cow_fault_us, null, what),
    row("machine: a zero-fill fault", "µs", costs.zero_fault_us, null, what),
    row("machine: fork + exit + wait of a warm interpreter", "ms", costs.fork_exit_ms, null, what),
    row("machine: a pipe round trip", "µs", costs.pipe_rtt_us, null, what),
  );
  b.log(
    `machine: copy-on-write fault ${costs.cow_fault_us.toFixed(1)} µs, zero-fill fault ` +
      `${costs.zero_fault_us.toFixed(1)} µs, fork+exit+wait ${costs.fork_exit_ms.toFixed(2)} ms, ` +
      `pipe round trip ${costs.pipe_rtt_us.toFixed(1)} µs`,
  );
  return costs;
}

/**
 * One line for the table's header: the machine's costs, so a reader compares runs across machines.
 * @example costsLine(costs) // "machine costs: a copy-on-write fault 44.0 µs, …"
 */
export function costsLine(c: MachineCosts | undefined): string {
  if (!c) return "machine costs: not measured";
  return (
    `machine costs: a copy-on-write fault ${c.cow_fault_us.toFixed(1)} µs, a zero-fill fault ` +
    `${c.zero_fault_us.toFixed(1)} µs, fork + exit + wait of a warm interpreter ` +
    `${c.fork_exit_ms.toFixed(2)} ms, a pipe round trip ${c.pipe_rtt_us.toFixed(1)} µs (Python ${c.python})`
  );
}
