import type { Bench } from "../context.ts";
import { type CpuSplit, cpuLine, cpuPerSession, faultsPerSession } from "../cpu.ts";
import type { Deployed } from "../service.ts";
import { type Goal, row, targetRow, verdict } from "../table.ts";
import { measureAccept } from "./accept.ts";
import { ASYNC_SESSIONS, FAULTS_GOAL, measureBurst } from "./sessions.ts";
import { measureSync } from "./sync.ts";

/**
 * One side of an A/B: the trivial and heavy fixtures on a service (`bench.svc`), deployed as the
 * side wants them (with reuse_process, say, or on a service started with other settings).
 */
export interface Side {
  name: string;
  bench: Bench;
  trivial: Deployed;
  heavy: Deployed;
}

/** One side's figures in one round. */
interface Measured {
  acceptP50: number;
  acceptP99: number;
  acceptRps: number;
  sessionsRate: number;
  everyOne: boolean;
  burstCpu: CpuSplit;
  syncP50: number;
  syncP99: number;
  syncRps: number;
  syncCpu: CpuSplit;
  syncCount: number;
  heavyP50: number;
  heavyP99: number;
}

/** The trivial fixture's accept, burst and sync, and the heavy fixture's sync at c=1. */
async function measureSide(side: Side, round: number) {
  const b = side.bench;
  const tag = `${b.svc.label}, ${side.name}, round ${round}`;
  const tb: Bench = { ...b, svc: { ...b.svc, label: tag } };
  const accept = await measureAccept(tb, side.trivial.hooks.accept!);
  const burst = await measureBurst(tb, side.trivial, ASYNC_SESSIONS);
  const sync = await measureSync(b, side.trivial.hooks.sync!, { tag });
  const heavy = await measureSync(b, side.heavy.hooks.sync!, { c16: false, tag: `heavy, ${tag}` });
  return {
    acceptP50: accept.latency.p50,
    acceptP99: accept.latency.p99,
    acceptRps: burst.rps,
    sessionsRate: burst.completedRate,
    everyOne: burst.everyOne,
    burstCpu: burst.cpu,
    syncP50: sync.c1.latency.p50,
    syncP99: sync.c1.latency.p99,
    syncRps: sync.c16!.rps,
    syncCpu: sync.cpu!,
    syncCount: sync.c16!.completed,
    heavyP50: heavy.c1.latency.p50,
    heavyP99: heavy.c1.latency.p99,
  } satisfies Measured;
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;

/** CPU splits of several runs added up. */
function addCpu(splits: CpuSplit[]): CpuSplit {
  const out = { ...splits[0]! };
  for (const s of splits.slice(1)) {
    for (const k of Object.keys(out) as (keyof CpuSplit)[]) out[k] += s[k];
  }
  return out;
}

/** Both rounds of one side as one: means of the figures, the CPU added up. */
function combine(ms: Measured[], sessions: number) {
  const m = (k: keyof Measured) => mean(ms.map((x) => x[k] as number));
  const burstCpu = addCpu(ms.map((x) => x.burstCpu));
  const syncCpu = addCpu(ms.map((x) => x.syncCpu));
  const syncCount = ms.reduce((a, x) => a + x.syncCount, 0);
  return {
    acceptP50: m("acceptP50"),
    acceptP99: m("acceptP99"),
    acceptRps: m("acceptRps"),
    sessionsRate: m("sessionsRate"),
    everyOne: ms.every((x) => x.everyOne),
    burstCpu,
    burstCpuPer: cpuPerSession(burstCpu, sessions * ms.length),
    syncP50: m("syncP50"),
    syncP99: m("syncP99"),
    syncRps: m("syncRps"),
    syncCpu,
    syncCount,
    syncCpuPer: cpuPerSession(syncCpu, syncCount),
    burstFaults: faultsPerSession(burstCpu, sessions * ms.length),
    syncFaults: faultsPerSession(syncCpu, syncCount),
    heavyP50: m("heavyP50"),
    heavyP99: m("heavyP99"),
  };
}

type Combined = ReturnType<typeof combine>;

/** The targets, by the figure of the row each phase pushes, and how to read them. */
function targets(r: Combined, bareRps: number | null) {
  const t = (figure: string, unit: string, value: number, goal: Goal, extra?: () => boolean) => ({
    figure,
    unit,
    value,
    goal,
    extra,
  });
  return [
    t("async accept p50, c=1", "ms", r.acceptP50, { limit: 1, below: true }),
    t("async accept p99, c=1", "ms", r.acceptP99, { limit: 5, below: true }),
    {
      ...t("async accept req/s, c=32 (session per request)", "req/s", r.acceptRps, {
        limit: 0.6,
        below: false,
        on: "ratio",
      }),
      floor: bareRps,
    },
    t(
      "async sessions completed/s (N / time to last end)",
      "/s",
      r.sessionsRate,
      { limit: 400, below: false },
      () => r.everyOne,
    ),
    t("CPU per async session (service + fork servers + session process)", "ms", r.burstCpuPer, {
      limit: 4,
      below: true,
    }),
    t("faults per async session (session process + fork server)", "", r.burstFaults, FAULTS_GOAL),
    t("faults per sync session, c=16", "", r.syncFaults, FAULTS_GOAL),
    t("sync round trip p50, c=1", "ms", r.syncP50, { limit: 2, below: true }),
    t("sync round trip p99, c=1", "ms", r.syncP99, { limit: 10, below: true }),
    t("sync sessions/s, c=16", "/s", r.syncRps, { limit: 400, below: false }),
    t("heavy: sync round trip p50, c=1", "ms", r.heavyP50, { limit: 2, below: true }),
    t("heavy: sync round trip p99, c=1", "ms", r.heavyP99, { limit: 10, below: true }),
  ];
}

/**
 * An A/B of two sides measured back to back in two rounds (base first, then the other first).
 * Rows: each figure of `other` beside the base's from the same rounds (`<other>: …`); and each
 * target row of the other phases says whether the target is met on `other` too, in a column of
 * its own.
 * @example await abPhase(b, { name: "default", … }, { name: "reuse_process", … }, bareRps);
 */
export async function abPhase(b: Bench, base: Side, other: Side, bareRps: number) {
  const runs = new Map<Side, Measured[]>([
    [base, []],
    [other, []],
  ]);
  for (const [i, order] of [
    [base, other],
    [other, base],
  ].entries()) {
    for (const side of order) runs.get(side)!.push(await measureSide(side, i + 1));
  }
  const a = combine(runs.get(base)!, ASYNC_SESSIONS);
  const z = combine(runs.get(other)!, ASYNC_SESSIONS);
  b.data[`ab.${other.name}`] = { runs: [...runs.values()], [base.name]: a, [other.name]: z };
  const bare = Number.isFinite(bareRps) ? bareRps : null;
  const column = `with ${other.name} (A/B)`;
  for (const [t, d] of targets(z, bare).map((t, i) => [t, targets(a, bare)[i]!] as const)) {
    const judged = targetRow(t.figure, t.unit, t.value, "floor" in t ? t.floor : null, "", t.goal, {
      extra: t.extra,
    });
    const main = b.rows.find((r) => r.figure === t.figure && r.target);
    if (main) main.alternatives = { ...main.alternatives, [column]: verdict(judged) };
    b.rows.push(
      row(`${other.name} A/B: ${t.figure}`, t.unit, t.value, d.value, `${base.name}, same rounds`),
    );
  }
  if (other.name === "reuse_process") relativeTargets(b, a, z, other.name);
  for (const [name, r] of [
    [base.name, a],
    [other.name, z],
  ] as const) {
    b.notes.push(
      `- A/B ${name}, async burst: ${cpuLine(r.burstCpu, ASYNC_SESSIONS * 2, "async session")}`,
      `- A/B ${name}, sync c=16: ${cpuLine(r.syncCpu, r.syncCount, "sync session")}`,
    );
  }
}

/**
 * Issue 32's targets, which hold on any machine: the default's sync p50 (trivial and heavy) at
 * most 2× reuse_process's, and its sessions/s at least 40 % of reuse_process's, same rounds.
 */
function relativeTargets(b: Bench, base: Combined, reuse: Combined, name: string) {
  const same = `${name}, same rounds`;
  const at = (limit: number, below: boolean) => ({ limit, below, on: "ratio" as const });
  b.rows.push(
    targetRow(
      "sync round trip p50, c=1, × reuse_process's",
      "ms",
      base.syncP50,
      reuse.syncP50,
      same,
      at(2, true),
      {
        text: "≤ 2× reuse_process's",
      },
    ),
    targetRow(
      "heavy: sync round trip p50, c=1, × reuse_process's",
      "ms",
      base.heavyP50,
      reuse.heavyP50,
      same,
      at(2, true),
      { text: "≤ 2× reuse_process's" },
    ),
    targetRow(
      "async sessions completed/s, × reuse_process's",
      "/s",
      base.sessionsRate,
      reuse.sessionsRate,
      same,
      at(0.4, false),
      { text: "≥ 40 % of reuse_process's, all complete", extra: () => base.everyOne },
    ),
  );
}
