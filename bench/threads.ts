import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { FRONT_THREAD_NAME } from "../src/front/priority.ts";

/** ms a group of threads ran on a core, and ms it waited, runnable, for one. */
export interface RunWait {
  run: number;
  wait: number;
}

/**
 * The service's threads over one window, as the scheduler counted them: the front door's, the
 * host's (the process's main thread), and the rest (V8's helpers: the collector, the compiler;
 * libuv's pool: LMDB's commits, file work), beside the load client's CPU and the machine's.
 */
export interface ThreadSplit {
  front: RunWait;
  host: RunWait;
  helpers: RunWait;
  loadClient: number;
  machineBusy: number;
  wallMs: number;
}

const TICK_MS = 10;

function sched(pid: number): Map<string, RunWait> {
  const out = new Map<string, RunWait>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const task = `/proc/${pid}/task/${tid}`;
      const [run, wait] = readFileSync(`${task}/schedstat`, "utf8").split(" ").map(Number);
      const group =
        tid === String(pid)
          ? "host"
          : readFileSync(`${task}/comm`, "utf8").trim() === FRONT_THREAD_NAME
            ? "front"
            : `helper ${tid}`;
      out.set(group, { run: run! / 1e6, wait: wait! / 1e6 });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

function busy(): number {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1);
  const n = cpu.map(Number);
  return (n.reduce((a, b) => a + b, 0) - (n[3] ?? 0) - (n[4] ?? 0)) * TICK_MS;
}

/**
 * Starts reading the service's threads; the returned function gives what each group spent since
 * (a helper that ended meanwhile is lost, one begun counts whole). Linux only.
 * @example const stop = threadSplit(svc.pid, client.pid); await load(); const split = stop();
 */
export function threadSplit(servicePid: number, loadClient: number): () => ThreadSplit {
  const before = sched(servicePid);
  const client0 = cpuOf(loadClient);
  const busy0 = busy();
  const t0 = Date.now();
  return () => {
    const after = sched(servicePid);
    const sum = (keep: (group: string) => boolean): RunWait => {
      const out = { run: 0, wait: 0 };
      for (const [group, b] of after) {
        if (!keep(group)) continue;
        const a = before.get(group) ?? { run: 0, wait: 0 };
        out.run += b.run - a.run;
        out.wait += b.wait - a.wait;
      }
      return out;
    };
    return {
      front: sum((g) => g === "front"),
      host: sum((g) => g === "host"),
      helpers: sum((g) => g.startsWith("helper")),
      loadClient: cpuOf(loadClient) - client0,
      machineBusy: busy() - busy0,
      wallMs: Date.now() - t0,
    };
  };
}

/**
 * One line: µs per unit of each group's run and wait, the load client's CPU, how busy the cores
 * were, and what other processes (the sessions', neighbours') took.
 * @example b.notes.push(`- burst: ${threadLine(split, 1000, "accept")}`)
 */
export function threadLine(s: ThreadSplit, units: number, what: string): string {
  const us = (ms: number) => ((1000 * ms) / units).toFixed(0);
  const rw = (name: string, t: RunWait) => `${name} ${us(t.run)} (waiting ${us(t.wait)})`;
  const ours = s.front.run + s.host.run + s.helpers.run + s.loadClient;
  const cores = availableParallelism();
  return (
    `µs of CPU per ${what}, and waiting for a core: ${rw("the front door's thread", s.front)}, ` +
    `${rw("the host's", s.host)}, ${rw("V8's and libuv's helpers", s.helpers)}; the load client ` +
    `${us(s.loadClient)}; other processes ${us(s.machineBusy - ours)}; the cores ` +
    `${((100 * s.machineBusy) / (s.wallMs * cores)).toFixed(0)} % busy over ${s.wallMs} ms`
  );
}
