import { type Bench, JSON_BODY } from "../context.ts";
import { type CpuSplit, cpuLine, cpuPerSession, cpuSplit, faultsPerSession } from "../cpu.ts";
import { forkFloor } from "../fork-probe.ts";
import type { Deployed } from "../service.ts";
import { row, targetRow } from "../table.ts";
import { type ThreadSplit, threadLine, threadSplit } from "../threads.ts";
import type { AcceptFloors } from "./accept.ts";

export const ASYNC_SESSIONS = 1000;

export interface Burst {
  /** Accepted requests/s at c=32. */
  rps: number;
  /** Completed sessions / time from the first request to the last session's end. */
  completedRate: number;
  completed: number;
  untilLastMs: number;
  /** Every request accepted, every session completed, the service idle again. */
  everyOne: boolean;
  cpu: CpuSplit;
  /** The service's threads while the burst was taken (its sessions' drain apart). */
  taking: ThreadSplit;
}

/**
 * `count` async webhooks at concurrency 32 after a drained warm-up burst, then the time until the
 * last of their sessions completes (from the sessions' `ended_at`), with the CPU split over it.
 * @example const burst = await measureBurst(b, trivial, ASYNC_SESSIONS);
 */
export async function measureBurst(
  b: Bench,
  trivial: Deployed,
  count: number,
  tag = "",
): Promise<Burst> {
  const name = `${b.svc.label}${tag}`;
  // Warm-up burst, fully drained, so the measured one starts from an idle service (and the
  // deployment's warm server is up).
  await b.load(`sessions.warmup.${name}`, {
    url: trivial.hooks.accept!,
    body: JSON_BODY,
    concurrency: 32,
    count: 200,
  });
  await b.svc.idle(60_000);

  const stop = cpuSplit(b.svc.pid, b.client.pid!);
  const threads = threadSplit(b.svc.pid, b.client.pid!);
  const burst = await b.load(`sessions.burst.${name}`, {
    url: trivial.hooks.accept!,
    body: JSON_BODY,
    concurrency: 32,
    count,
    maxMs: 60_000,
  });
  const taking = threads();
  const drained = await b.svc.idle(150_000);
  const cpu = stop();
  const since = Math.floor(burst.startedAt);
  const mine = (await b.svc.sessions(trivial.projectId)).filter(
    (s) => s.trigger_name === "accept" && Date.parse(s.created_at) >= since,
  );
  const completed = mine.filter((s) => s.state === "completed");
  const lastEnd = Math.max(...mine.map((s) => (s.ended_at ? Date.parse(s.ended_at) : 0)));
  const untilLastMs = lastEnd - burst.startedAt;
  const accepted = burst.statuses["202"] ?? 0;
  const everyOne = drained && completed.length === accepted && accepted === count;
  b.data[`sessions.outcome.${name}`] = {
    accepted,
    sessions: mine.length,
    completed: completed.length,
    states: countBy(mine.map((s) => s.state)),
    untilLastMs,
    drained,
    cpu,
    taking,
  };
  return {
    rps: burst.rps,
    completedRate: completed.length / (untilLastMs / 1000),
    completed: completed.length,
    untilLastMs,
    everyOne,
    cpu,
    taking,
  };
}

/**
 * Sessions/s: ASYNC_SESSIONS async webhooks at concurrency 32 (the accept rate), then the time
 * until the last of their sessions completes. The floor is a fork server of our own forking
 * children that say hello and exit, at the same concurrency.
 */
export async function sessionsPhase(b: Bench, trivial: Deployed, floors: AcceptFloors) {
  const { bareRps, durableRps } = floors;
  const fork = await forkFloor(b.python, { count: 1000, concurrency: 32 });
  b.data["fork.floor"] = fork;
  b.floors.sessionsRate = fork.rps;
  const burst = await measureBurst(b, trivial, ASYNC_SESSIONS);
  b.figures[b.svc.label] = {
    ...b.figures[b.svc.label],
    acceptRps: burst.rps,
    sessionsRate: burst.completedRate,
  };
  b.notes.push(
    `- async burst, ${b.svc.label}: ${cpuLine(burst.cpu, ASYNC_SESSIONS, "async session")}`,
    `- the same burst while it was taken (its drain apart): ${threadLine(burst.taking, ASYNC_SESSIONS, "accept")}`,
  );
  const forkName = "fork server: fork→hello";
  b.rows.push(
    targetRow(
      "async accept req/s, c=32 (session per request)",
      "req/s",
      burst.rps,
      bareRps,
      "bare Hono route",
      { limit: 0.5, below: false, on: "ratio" },
      { text: "≥ 50 % of floor", extra: () => burst.everyOne },
    ),
    ...frontRows(burst.cpu),
    row(
      "  same, × the durable floor (route + one LMDB commit)",
      "req/s",
      burst.rps,
      durableRps,
      "route + one LMDB commit",
    ),
    ...(await warmBurstRows(b, trivial, bareRps)),
    targetRow(
      "async sessions completed/s (N / time to last end)",
      "/s",
      burst.completedRate,
      fork.rps,
      forkName,
      { limit: 400, below: false },
      {
        text: "≥ 400/s, all complete",
        extra: () => burst.everyOne,
        note: `${burst.completed}/${ASYNC_SESSIONS} completed`,
      },
    ),
    targetRow(
      "CPU per async session (service + fork servers + session process)",
      "ms",
      cpuPerSession(burst.cpu, ASYNC_SESSIONS),
      null,
      "–",
      { limit: 4, below: true },
      { text: "≤ 4 ms" },
    ),
    faultsRow(
      "faults per async session (session process + fork server)",
      burst.cpu,
      ASYNC_SESSIONS,
    ),
    row(
      "time until the last session completes",
      "s",
      burst.untilLastMs / 1000,
      ASYNC_SESSIONS / fork.rps,
      "N / fork rate",
    ),
    row(
      `async sessions completed (of ${ASYNC_SESSIONS})`,
      "",
      burst.completed,
      ASYNC_SESSIONS,
      "sent",
      "all",
      () => burst.everyOne,
    ),
  );
}

/** Bursts measured after the first, the last of them reported: the service's code warm. */
const WARM_BURSTS = 2;

/**
 * The same burst again, twice, the second reported: the first burst runs our code while V8 still
 * compiles it (the front's thread took 240-340 µs of CPU an accept in a service's first 1,000,
 * 140-165 µs from its third on, docs/performance.md), the bare route's few lines are compiled
 * within its warm-up. What a service that has been running sustains, beside what one just started
 * does (the target's row).
 */
async function warmBurstRows(b: Bench, trivial: Deployed, bareRps: number) {
  let warm: Burst | null = null;
  for (let i = 1; i <= WARM_BURSTS; i++) {
    warm = await measureBurst(b, trivial, ASYNC_SESSIONS, `.warm${i}`);
  }
  if (!warm) return [];
  b.notes.push(
    `- the warm burst (burst ${WARM_BURSTS + 1}) while it was taken: ${threadLine(warm.taking, ASYNC_SESSIONS, "accept")}`,
  );
  const note = warm.everyOne ? undefined : `${warm.completed}/${ASYNC_SESSIONS} completed`;
  return [
    row(
      `  same, the service warm (burst ${WARM_BURSTS + 1} of its kind)`,
      "req/s",
      warm.rps,
      bareRps,
      "bare Hono route",
      "",
      undefined,
      note,
    ),
    ...frontRows(warm.cpu, "  the front door's thread per warm accept"),
  ];
}

/** The faults target: minor faults per session, of its process and of the fork server. */
export const FAULTS_GOAL = { limit: 250, below: true } as const;

/**
 * A row of faults per session over `split`, against FAULTS_GOAL.
 * @example b.rows.push(faultsRow("faults per sync session, c=16", cpu, 800));
 */
export function faultsRow(figure: string, split: CpuSplit, sessions: number) {
  return targetRow(figure, "", faultsPerSession(split, sessions), null, "–", FAULTS_GOAL, {
    text: "≤ 250",
  });
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/**
 * Per accept of the burst, the front door's thread: CPU, and time it was ready but waited for a
 * core (the sessions' processes and the host share the cores); none without a front thread.
 */
function frontRows(cpu: CpuSplit, what = "  the front door's thread per accept") {
  if (Number.isNaN(cpu.frontRun)) return [];
  const per = (ms: number) => (1000 * ms) / ASYNC_SESSIONS;
  return [
    row(`${what}: CPU`, "µs", per(cpu.frontRun), null, "–"),
    row("  … and waiting for a core", "µs", per(cpu.frontWait), null, "–"),
  ];
}
