import { readdirSync, readFileSync } from "node:fs";
import { FRONT_THREAD_NAME } from "../src/front/priority.ts";

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

/** A fork server of the service: the cold one, or a deployment's warm one (`--warm-dir`). */
export interface ForkServerProc {
  pid: number;
  /** The build folder a warm server imported, or null for the cold server. */
  warmDir: string | null;
}

/**
 * The service's fork servers: its children running `workflow_sdk.runner serve`.
 * @example forkServers(svc.pid).filter((s) => s.warmDir !== null)
 */
export function forkServers(servicePid: number): ForkServerProc[] {
  const out: ForkServerProc[] = [];
  for (const pid of childrenOf(servicePid)) {
    const cmd = cmdline(pid);
    if (!/workflow_sdk\.runner serve/.test(cmd)) continue;
    const m = /--warm-dir (\S+)/.exec(cmd);
    out.push({ pid, warmDir: m ? m[1]! : null });
  }
  return out;
}

/**
 * Every process forked by the service's fork servers: sessions and the spares waiting.
 * @example sumMemory(sessionProcesses(svc.pid)).pss
 */
export function sessionProcesses(servicePid: number): number[] {
  return forkServers(servicePid).flatMap((s) => childrenOf(s.pid));
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

/** ms a thread (or a group of them) ran on a core, and ms it waited, runnable, for one. */
export interface RunWait {
  run: number;
  wait: number;
}

/**
 * The threads of a service process as the scheduler counted them
 * (`/proc/<pid>/task/<tid>/schedstat`): "host" (its main thread), "front" (the front door's,
 * named FRONT_THREAD_NAME, src/front/priority.ts) and `helper <tid>` for the rest (V8's and
 * libuv's); empty when it is gone or not on Linux.
 * @example threadSched(svc.pid).get("front")?.wait
 */
export function threadSched(pid: number): Map<string, RunWait> {
  const out = new Map<string, RunWait>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // gone, or not Linux
  }
  for (const tid of tids) {
    try {
      const task = `/proc/${pid}/task/${tid}`;
      const [run, wait] = readFileSync(`${task}/schedstat`, "utf8").split(" ").map(Number);
      const name =
        tid === String(pid)
          ? "host"
          : readFileSync(`${task}/comm`, "utf8").trim() === FRONT_THREAD_NAME
            ? "front"
            : `helper ${tid}`;
      out.set(name, { run: run! / 1e6, wait: wait! / 1e6 });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
