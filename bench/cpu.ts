import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** utime, stime, cutime, cstime of a process, ms (children count once they are waited for). */
function times(pid: number): [number, number, number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14–17 of proc(5); f[0] is field 3.
  return [f[11], f[12], f[13], f[14]].map((v) => Number(v) * TICK_MS) as [
    number,
    number,
    number,
    number,
  ];
}

/** The whole machine's busy and total time from /proc/stat, ms per core summed. */
function machine(): { busy: number; total: number } {
  const cpu = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) * TICK_MS, total: total * TICK_MS };
}

export interface CpuSplit {
  /** This process: the service's main thread, libuv and GC threads. */
  serviceUser: number;
  serviceSys: number;
  /** Session processes, reaped by the fork server. */
  sessionsUser: number;
  sessionsSys: number;
  forkServer: number;
  loadClient: number;
  /** Everything busy on the machine (all of the above and any neighbours). */
  machineBusy: number;
  wallMs: number;
}

/**
 * Starts CPU accounting; the returned function gives ms of CPU spent since, by process.
 * @example const stop = cpuSplit(forkServerPid, clientPid); await work(); const split = stop();
 */
export function cpuSplit(forkServer: number, loadClient: number): () => CpuSplit {
  const self = process.cpuUsage();
  const fs0 = times(forkServer);
  const lc0 = times(loadClient);
  const m0 = machine();
  const t0 = Date.now();
  return () => {
    const s = process.cpuUsage(self);
    const fs1 = times(forkServer);
    const lc1 = times(loadClient);
    const m1 = machine();
    return {
      serviceUser: s.user / 1000,
      serviceSys: s.system / 1000,
      sessionsUser: fs1[2] - fs0[2],
      sessionsSys: fs1[3] - fs0[3],
      forkServer: fs1[0] + fs1[1] - fs0[0] - fs0[1],
      loadClient: lc1[0] + lc1[1] - lc0[0] - lc0[1],
      machineBusy: m1.busy - m0.busy,
      wallMs: Date.now() - t0,
    };
  };
}

/** One line: ms of CPU per unit (session, request), by process. */
export function cpuLine(split: CpuSplit, units: number, what: string): string {
  const per = (ms: number) => (ms / units).toFixed(2);
  return (
    `CPU per ${what} (ms): service ${per(split.serviceUser + split.serviceSys)} ` +
    `(user ${per(split.serviceUser)}, sys ${per(split.serviceSys)}), session processes ` +
    `${per(split.sessionsUser + split.sessionsSys)} (user ${per(split.sessionsUser)}, sys ${per(split.sessionsSys)}), ` +
    `fork server ${per(split.forkServer)}, load client ${per(split.loadClient)}; machine busy ` +
    `${per(split.machineBusy)} (${((100 * split.machineBusy) / (split.wallMs * availableParallelism())).toFixed(0)} % of ${availableParallelism()} cores over ${(split.wallMs / 1000).toFixed(1)} s)`
  );
}
