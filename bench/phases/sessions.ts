import { type Bench, JSON_BODY } from "../context.ts";
import { cpuLine, cpuSplit } from "../cpu.ts";
import { forkFloor } from "../fork-probe.ts";
import { findForkServer } from "../proc.ts";
import { row } from "../table.ts";

export const ASYNC_SESSIONS = 2000;

/**
 * Sessions/s: ASYNC_SESSIONS async webhooks at concurrency 32 (the accept rate), then the time
 * until the last of their sessions completes, read from the sessions' `ended_at`. The floor is a
 * fork server of our own forking children that say hello and exit, at the same concurrency.
 */
export async function sessionsPhase(
  b: Bench,
  trivial: { projectId: string; hooks: Record<string, string> },
  bareRps: number,
) {
  const fork = await forkFloor(b.python, { count: 1000, concurrency: 32 });
  b.data["fork.floor"] = fork;

  // Warm-up burst, fully drained, so the measured one starts from an idle service.
  await b.load("sessions.warmup", {
    url: trivial.hooks.accept!,
    body: JSON_BODY,
    concurrency: 32,
    count: 200,
  });
  await b.svc.idle(60_000);

  const stop = cpuSplit(findForkServer()!, b.client.pid!);
  const burst = await b.load("sessions.burst", {
    url: trivial.hooks.accept!,
    body: JSON_BODY,
    concurrency: 32,
    count: ASYNC_SESSIONS,
    maxMs: 60_000,
  });
  const drained = await b.svc.idle(150_000);
  const cpu = stop();
  b.data["sessions.cpu"] = cpu;
  b.notes.push(`- async burst: ${cpuLine(cpu, ASYNC_SESSIONS, "async session")}`);
  const since = Math.floor(burst.startedAt);
  const mine = (await b.svc.sessions(trivial.projectId)).filter(
    (s) => s.trigger_name === "accept" && Date.parse(s.created_at) >= since,
  );
  const completed = mine.filter((s) => s.state === "completed");
  const lastEnd = Math.max(...mine.map((s) => (s.ended_at ? Date.parse(s.ended_at) : 0)));
  const untilLastMs = lastEnd - burst.startedAt;
  const accepted = burst.statuses["202"] ?? 0;
  const everyOne = drained && completed.length === accepted && accepted === ASYNC_SESSIONS;
  const completedRate = completed.length / (untilLastMs / 1000);
  b.data["sessions.outcome"] = {
    accepted,
    sessions: mine.length,
    completed: completed.length,
    states: countBy(mine.map((s) => s.state)),
    untilLastMs,
    drained,
  };
  const forkName = "fork server: fork→hello";
  b.rows.push(
    row(
      "async accept req/s, c=32 (session per request)",
      "req/s",
      burst.rps,
      bareRps,
      "bare Hono route",
      "≥ 60 % of floor",
      (_v, r) => r !== null && r >= 0.6,
    ),
    row(
      `async sessions accepted/s, c=32, N=${ASYNC_SESSIONS}`,
      "/s",
      burst.rps,
      fork.rps,
      forkName,
    ),
    row(
      "async sessions completed/s (N / time to last end)",
      "/s",
      completedRate,
      fork.rps,
      forkName,
      "≥ 400/s, all complete",
      (v) => v >= 400 && everyOne,
      `${completed.length}/${ASYNC_SESSIONS} completed`,
    ),
    row(
      "time until the last session completes",
      "s",
      untilLastMs / 1000,
      ASYNC_SESSIONS / fork.rps,
      "N / fork rate",
    ),
    row(
      `async sessions completed (of ${ASYNC_SESSIONS})`,
      "",
      completed.length,
      ASYNC_SESSIONS,
      "sent",
      "all",
      () => everyOne,
    ),
  );
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
