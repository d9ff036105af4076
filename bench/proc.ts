import { readdirSync, readFileSync } from "node:fs";

/** Memory of one process, KiB: resident, proportional (shared pages split), and private. */
export interface ProcMemory {
  rss: number;
  pss: number;
  uss: number;
}

function kib(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * VmRSS from `/proc/<pid>/status`; Pss and Private_* from `/proc/<pid>/smaps_rollup`. Forked
 * children share most pages with their parent, so their Pss and USS say more than their RSS.
 * @example procMemory(process.pid).rss
 */
export function procMemory(pid: number): ProcMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  return {
    rss: kib(status, "VmRSS"),
    pss: kib(rollup, "Pss"),
    uss: kib(rollup, "Private_Clean") + kib(rollup, "Private_Dirty"),
  };
}

/** Direct children of a process (every thread's `children` file), or [] if it is gone. */
export function childrenOf(pid: number): number[] {
  try {
    const out: number[] = [];
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
    return out;
  } catch {
    return [];
  }
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** The service's fork server: our child running `workflow_sdk.runner serve`. */
export function findForkServer(parent = process.pid): number | undefined {
  return childrenOf(parent).find((pid) => /workflow_sdk\.runner serve/.test(cmdline(pid)));
}

/** Sums the memory of several processes that may exit meanwhile (those are skipped). */
export function sumMemory(pids: number[]): ProcMemory & { count: number } {
  const total = { rss: 0, pss: 0, uss: 0, count: 0 };
  for (const pid of pids) {
    try {
      const m = procMemory(pid);
      total.rss += m.rss;
      total.pss += m.pss;
      total.uss += m.uss;
      total.count++;
    } catch {
      // gone between listing and reading
    }
  }
  return total;
}
