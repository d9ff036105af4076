import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { forkServers, sessionProcesses, threadSched } from "./proc.ts";

const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

export interface Times {
  user: number;
  sys: number;
  /** The process's own minor page faults (a fork server's: its pages write-protected by each fork). */
  minflt: number;
  /** Of waited-for children: CPU ms and minor page faults (copy-on-write faults among them). */
  childUser: number;
  childSys: number;
  childMinflt: number;
}

/**
 * CPU ms and child faults of one process, as `cpuSplit` reads them.
 * @example const t = procTimes(server.pid!); t.childMinflt
 */
export const procTimes = (pid: number): Times => times(`/proc/${pid}/stat`);

/**
 * CPU ms (user + sys) a process spent between two readings of it.
 * @example const t0 = procTimes(pid); …; cpuMs(t0, procTimes(pid))
 */
export const cpuMs = (before: Times, after: Times): number =>
  after.user + after.sys - before.user - before.sys;

const ZERO: Times = { user: 0, sys: 0, minflt: 0, childUser: 0, childSys: 0, childMinflt: 0 };

/** From `/proc/<pid>/stat` (or `/proc/<pid>/task/<tid>/stat`); zeros when it is gone. */
function times(path: string): Times {
  try {
    const stat = readFileSync(path, "utf8");
    // f[0] is field 3 of proc(5): minflt is field 10, cminflt 11, utime…cstime fields 14–17.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      user: Number(f[11]) * TICK_MS,
      sys: Number(f[12]) * TICK_MS,
      minflt: Number(f[7]),
      childUser: Number(f[13]) * TICK_MS,
      childSys: Number(f[14]) * TICK_MS,
      childMinflt: Number(f[8]),
    };
  } catch {
    return ZERO;
  }
}

/**
 * A live process's own CPU ms and minor faults (what its parent gets in cutime… once it is reaped).
 * @example ownTimes(server.pid!)?.minflt
 */
export const ownTimes = (pid: number) => own(pid);

function own(pid: number): { user: number; sys: number; minflt: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(f[11]) * TICK_MS, sys: Number(f[12]) * TICK_MS, minflt: Number(f[7]) };
  } catch {
    return null;
  }
}

type Own = NonNullable<ReturnType<typeof own>>;

function owns(pids: number[]): Map<number, Own> {
  const out = new Map<number, Own>();
  for (const pid of pids) {
    const t = own(pid);
    if (t) out.set(pid, t);
  }
  return out;
}

/**
 * What session processes alive at the start or the end spent in between: a fork server's
 * children count in its cutime only once reaped, so a process alive at the end (a spare, an
 * idle reused one) adds what it has spent so far, and one alive at the start takes off what it
 * had spent before (its whole life is in the cutime once it has ended).
 */
function liveDelta(before: Map<number, Own>, after: Map<number, Own>): Own {
  const d = { user: 0, sys: 0, minflt: 0 };
  for (const pid of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(pid) ?? { user: 0, sys: 0, minflt: 0 };
    const b = after.get(pid) ?? { user: 0, sys: 0, minflt: 0 };
    d.user += b.user - a.user;
    d.sys += b.sys - a.sys;
    d.minflt += b.minflt - a.minflt;
  }
  return d;
}

/** Write syscalls and bytes from `/proc/<pid>/io` (sockets count in syscw, not in write_bytes). */
function io(pid: number): { syscw: number; writeBytes: number } {
  try {
    const text = readFileSync(`/proc/${pid}/io`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, "m").exec(text)?.[1]);
    return { syscw: field("syscw"), writeBytes: field("write_bytes") };
  } catch {
    return { syscw: Number.NaN, writeBytes: Number.NaN };
  }
}

/**
 * The whole machine's busy and total time from /proc/stat, ms per core summed.
 * @example const m0 = machine(); …; const busyMs = machine().busy - m0.busy;
 */
export function machine(): { busy: number; total: number } {
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

/** The service's front door thread's run and wait (`threadSched`); null without one. */
const frontSched = (pid: number) => threadSched(pid).get("front") ?? null;

export interface CpuSplit {
  /** The service process's main thread: HTTP, routing, session bookkeeping, serialising records. */
  serviceMain: number;
  /** Its other threads: the libuv pool (file and native storage work) and V8's helpers (GC). */
  serviceThreads: number;
  /**
   * Of the other threads, the front door's (NaN without one): ms on a core, and ms it was ready
   * to run but waited for a core (what an accept queues behind when the cores are shared).
   */
  frontRun: number;
  frontWait: number;
  /** The service's write syscalls (sockets and storage) and bytes written to storage. */
  serviceSyscw: number;
  serviceWriteKiB: number;
  /**
   * Session processes (reaped by the fork servers, and those alive at the start or the end:
   * spares, idle reused ones): user = runner set-up + handler.
   */
  sessionsUser: number;
  /** … sys = copy-on-write faults, socket I/O and the exit's teardown. */
  sessionsSys: number;
  /** Minor page faults of the session processes (copy-on-write faults are most of them). */
  sessionsMinflt: number;
  /** The fork servers themselves: sys is mostly fork() (copying page tables), user their loop. */
  forkServersUser: number;
  forkServersSys: number;
  /** The fork servers' own minor faults: each fork write-protects their pages, their next write faults. */
  forkServersMinflt: number;
  loadClient: number;
  /** Everything busy on the machine (all of the above and any neighbours). */
  machineBusy: number;
  wallMs: number;
}

function sum(ts: Iterable<Times>): Times {
  const out = { ...ZERO };
  for (const t of ts) {
    out.user += t.user;
    out.sys += t.sys;
    out.minflt += t.minflt;
    out.childUser += t.childUser;
    out.childSys += t.childSys;
    out.childMinflt += t.childMinflt;
  }
  return out;
}

/**
 * Starts CPU accounting of the service process, its fork servers (cold and warm, those alive at
 * the start or the end) and the load client; the returned function gives ms of CPU spent since.
 * @example const stop = cpuSplit(svc.pid, clientPid); await work(); const split = stop();
 */
export function cpuSplit(servicePid: number, loadClient: number): () => CpuSplit {
  const servers0 = new Map(
    forkServers(servicePid).map((s) => [s.pid, times(`/proc/${s.pid}/stat`)]),
  );
  const live0 = owns(sessionProcesses(servicePid));
  const main0 = times(`/proc/${servicePid}/stat`);
  // /proc/<pid>/stat counts every thread (exited ones too); task/<pid>/stat the main one only.
  const mainThread0 = times(`/proc/${servicePid}/task/${servicePid}/stat`);
  const io0 = io(servicePid);
  const front0 = frontSched(servicePid);
  const lc0 = times(`/proc/${loadClient}/stat`);
  const m0 = machine();
  const t0 = Date.now();
  return () => {
    const servers1 = new Map(
      forkServers(servicePid).map((s) => [s.pid, times(`/proc/${s.pid}/stat`)]),
    );
    const live = liveDelta(live0, owns(sessionProcesses(servicePid)));
    const pids = new Set([...servers0.keys(), ...servers1.keys()]);
    // A server that exited meanwhile is counted up to the start only (its last reading is lost).
    const d = sum(
      [...pids].map((pid) => {
        const a = servers0.get(pid) ?? ZERO;
        const b = servers1.get(pid) ?? a;
        return {
          user: b.user - a.user,
          sys: b.sys - a.sys,
          minflt: b.minflt - a.minflt,
          childUser: b.childUser - a.childUser,
          childSys: b.childSys - a.childSys,
          childMinflt: b.childMinflt - a.childMinflt,
        };
      }),
    );
    const main1 = times(`/proc/${servicePid}/stat`);
    const mainThread1 = times(`/proc/${servicePid}/task/${servicePid}/stat`);
    const io1 = io(servicePid);
    const front1 = front0 && frontSched(servicePid);
    const lc1 = times(`/proc/${loadClient}/stat`);
    const m1 = machine();
    const serviceAll = cpuMs(main0, main1);
    const main = cpuMs(mainThread0, mainThread1);
    return {
      serviceMain: main,
      serviceThreads: serviceAll - main,
      frontRun: front1 ? front1.run - front0!.run : Number.NaN,
      frontWait: front1 ? front1.wait - front0!.wait : Number.NaN,
      serviceSyscw: io1.syscw - io0.syscw,
      serviceWriteKiB: (io1.writeBytes - io0.writeBytes) / 1024,
      sessionsUser: d.childUser + live.user,
      sessionsSys: d.childSys + live.sys,
      sessionsMinflt: d.childMinflt + live.minflt,
      forkServersUser: d.user,
      forkServersSys: d.sys,
      forkServersMinflt: d.minflt,
      loadClient: cpuMs(lc0, lc1),
      machineBusy: m1.busy - m0.busy,
      wallMs: Date.now() - t0,
    };
  };
}

/**
 * One line: ms of CPU per unit (session, request), by where it goes.
 * @example b.notes.push(`- sync c=16: ${cpuLine(split, 800, "sync session")}`)
 */
export function cpuLine(split: CpuSplit, units: number, what: string): string {
  const per = (ms: number) => (ms / units).toFixed(2);
  const busyPct = (100 * split.machineBusy) / (split.wallMs * availableParallelism());
  const ours =
    split.serviceMain +
    split.serviceThreads +
    split.forkServersUser +
    split.forkServersSys +
    split.sessionsUser +
    split.sessionsSys +
    split.loadClient;
  return (
    `CPU per ${what} (ms): service ${per(split.serviceMain + split.serviceThreads)} ` +
    `(main thread ${per(split.serviceMain)}: HTTP, bookkeeping, records; other threads ${per(split.serviceThreads)}: ` +
    `${frontPart(split, units)}libuv pool storage/file work and GC; ${(split.serviceSyscw / units).toFixed(1)} write syscalls and ` +
    `${(split.serviceWriteKiB / units).toFixed(2)} KiB to storage per ${what}); fork servers ${per(split.forkServersUser + split.forkServersSys)} ` +
    `(sys ${per(split.forkServersSys)}: the kernel's fork, page-table copy; user ${per(split.forkServersUser)}; ` +
    `${(split.forkServersMinflt / units).toFixed(0)} minor faults of their own); ` +
    `session processes ${per(split.sessionsUser + split.sessionsSys)} (user ${per(split.sessionsUser)}: runner set-up + handler; ` +
    `sys ${per(split.sessionsSys)}: copy-on-write faults, ${(split.sessionsMinflt / units).toFixed(0)} minor faults each, socket I/O, exit); ` +
    `load client ${per(split.loadClient)}; machine busy ${per(split.machineBusy)} ` +
    `(${busyPct.toFixed(0)} % of ${availableParallelism()} cores over ${(split.wallMs / 1000).toFixed(1)} s; ` +
    `${per(split.machineBusy - ours)} of it other processes on the machine)`
  );
}

/** "the front door's thread 0.12 ms, waiting 0.30 ms for a core; " (empty without one). */
function frontPart(split: CpuSplit, units: number): string {
  if (Number.isNaN(split.frontRun)) return "";
  const per = (ms: number) => (ms / units).toFixed(3);
  return `the front door's thread ${per(split.frontRun)} ms, waiting ${per(split.frontWait)} ms for a core; `;
}

/**
 * CPU ms per session of the service, its fork servers and the session processes together (the
 * load client and the machine's other processes left out): the "CPU per session".
 * @example cpuPerSession(burst.cpu, 1000) // 8.3
 */
export function cpuPerSession(split: CpuSplit, sessions: number): number {
  return (
    (split.serviceMain +
      split.serviceThreads +
      split.forkServersUser +
      split.forkServersSys +
      split.sessionsUser +
      split.sessionsSys) /
    sessions
  );
}

/**
 * Minor page faults per session: the session processes' (from fork to exit) and the fork
 * servers' own (each fork write-protects their pages), the "faults per session".
 * @example faultsPerSession(burst.cpu, 1000) // 1160
 */
export function faultsPerSession(split: CpuSplit, sessions: number): number {
  return (split.sessionsMinflt + split.forkServersMinflt) / sessions;
}
