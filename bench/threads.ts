import { availableParallelism } from "node:os";
import { cpuMs, machine, procTimes } from "./cpu.ts";
import { type RunWait, threadSched } from "./proc.ts";

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

/**
 * Starts reading the service's threads; the returned function gives what each group spent since
 * (a helper that ended meanwhile is lost, one begun counts whole). Linux only.
 * @example const stop = threadSplit(svc.pid, client.pid); await load(); const split = stop();
 */
export function threadSplit(servicePid: number, loadClient: number): () => ThreadSplit {
  const before = threadSched(servicePid);
  const client0 = procTimes(loadClient);
  const busy0 = machine().busy;
  const t0 = Date.now();
  return () => {
    const after = threadSched(servicePid);
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
      loadClient: cpuMs(client0, procTimes(loadClient)),
      machineBusy: machine().busy - busy0,
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
