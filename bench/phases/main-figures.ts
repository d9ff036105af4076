import type { Bench, MainFigures } from "../context.ts";
import type { Deployed } from "../service.ts";
import { row } from "../table.ts";
import { measureAccept } from "./accept.ts";
import { type Burst, measureBurst } from "./sessions.ts";
import { measureSync } from "./sync.ts";

/**
 * The main figures on the service `b.svc` with the trivial fixture, measured exactly as the
 * headline phases measure them (same requests, counts and concurrency).
 * @example const figures = await mainFigures(memBench, trivial, 2000);
 */
export async function mainFigures(
  b: Bench,
  trivial: Deployed,
  sessions: number,
): Promise<{ figures: MainFigures; burst: Burst }> {
  const accept = await measureAccept(b, trivial.hooks.accept!);
  const burst = await measureBurst(b, trivial, sessions);
  const sync = await measureSync(b, trivial.hooks.sync!);
  const figures: MainFigures = {
    acceptP50: accept.latency.p50,
    acceptRps: burst.rps,
    sessionsRate: burst.completedRate,
    syncP50: sync.c1.latency.p50,
    syncP99: sync.c1.latency.p99,
    syncRps: sync.c16!.rps,
  };
  b.figures[b.svc.label] = figures;
  return { figures, burst };
}

interface Figure {
  key: keyof MainFigures;
  name: string;
  unit: string;
  floorName: string;
  /** Lower is better (a latency) or higher (a rate). */
  lower: boolean;
}

export const MAIN: Figure[] = [
  {
    key: "acceptP50",
    name: "async accept p50, c=1",
    unit: "ms",
    floorName: "bare Hono route",
    lower: true,
  },
  {
    key: "acceptRps",
    name: "async accept req/s, c=32",
    unit: "req/s",
    floorName: "bare Hono route",
    lower: false,
  },
  {
    key: "syncP50",
    name: "sync round trip p50, c=1",
    unit: "ms",
    floorName: "ThreadingHTTPServer",
    lower: true,
  },
  {
    key: "syncP99",
    name: "sync round trip p99, c=1",
    unit: "ms",
    floorName: "ThreadingHTTPServer",
    lower: true,
  },
  {
    key: "syncRps",
    name: "sync sessions/s, c=16",
    unit: "/s",
    floorName: "ThreadingHTTPServer",
    lower: false,
  },
  {
    key: "sessionsRate",
    name: "async sessions completed/s",
    unit: "/s",
    floorName: "fork server: fork→hello",
    lower: false,
  },
];

/**
 * How much faster `other` is than `base` on one figure, in % (negative: slower).
 * @example fasterPct(2, 1.8, true) // 11.1
 */
export function fasterPct(base: number, other: number, lower: boolean): number {
  return 100 * (lower ? base / other - 1 : other / base - 1);
}

/**
 * Rows for the memory-storage service: each figure beside its floor from this run, with how much
 * faster than the default storage it is; met when it is at most 10 % faster. Then one summary row.
 * @example storageRows(b, "default storage", "memory storage");
 */
export function storageRows(b: Bench, base: string, other: string): void {
  const d = b.figures[base] ?? {};
  const m = b.figures[other] ?? {};
  let all = true;
  let worst = Number.NEGATIVE_INFINITY;
  for (const f of MAIN) {
    const ours = m[f.key] ?? null;
    const ref = d[f.key];
    const pct = ours !== null && ref !== undefined ? fasterPct(ref, ours, f.lower) : Number.NaN;
    const ok = Number.isFinite(pct) && pct <= 10;
    all &&= ok;
    if (Number.isFinite(pct)) worst = Math.max(worst, pct);
    const r = row(
      `${other}: ${f.name}`,
      f.unit,
      ours,
      b.floors[f.key] ?? null,
      f.floorName,
      "≤ 10 % faster than default",
      () => ok,
    );
    r.versus = Number.isFinite(pct)
      ? `${pct >= 0 ? "+" : ""}${pct.toFixed(1)} % (default ${fmt(ref!)})`
      : "–";
    b.rows.push(r);
  }
  const summary = row(
    `${other} no more than 10 % faster than ${base}, on every row`,
    "%",
    Number.isFinite(worst) ? worst : null,
    null,
    "–",
    "≤ 10 %",
    () => all,
    "the largest figure of the rows above",
  );
  summary.versus = Number.isFinite(worst) ? `worst ${worst.toFixed(1)} %` : "–";
  b.rows.push(summary);
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(3);
}
