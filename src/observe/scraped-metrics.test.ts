import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { RuntimeGauges } from "../runtime/runtime.ts";
import { declareScraped } from "./scraped-metrics.ts";

/** The value of one sample line of a Prometheus text answer (undefined when absent). */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : undefined;
}

function runtimeGauges(reuseSessions: RuntimeGauges["reuseSessions"]): RuntimeGauges {
  return {
    running: 0,
    waiting: 0,
    maxRunning: 4,
    maxWaiting: 8,
    warmServers: 0,
    spareProcesses: 0,
    idleReusedProcesses: 0,
    reuseSessions,
  };
}

describe("metrics read at scrape time", () => {
  it("reports live and parked sessions each from its own count", async () => {
    const registry = new Registry();
    declareScraped(registry, { sessions: () => ({ live: 3, parked: 1 }) });
    const text = await registry.metrics();
    expect(sample(text, "hookline_sessions_live"), "hookline_sessions_live is the live count").toBe(
      3,
    );
    expect(
      sample(text, "hookline_sessions_parked"),
      "hookline_sessions_parked is the parked count",
    ).toBe(1);
  });

  it("reports the runtime's reuse counter as it stands at each scrape, not added up over scrapes", async () => {
    const registry = new Registry();
    let counts = { reused: 2, fresh: 1 };
    declareScraped(registry, { runtime: () => runtimeGauges(counts) });
    const series = (process: string) =>
      `hookline_python_reuse_sessions_total{process="${process}"}`;
    const first = await registry.metrics();
    expect([sample(first, series("reused")), sample(first, series("fresh"))]).toEqual([2, 1]);
    counts = { reused: 3, fresh: 1 };
    const second = await registry.metrics();
    expect(
      [sample(second, series("reused")), sample(second, series("fresh"))],
      "a second scrape reports the runtime's totals (3 reused, 1 fresh), not the sum of both scrapes",
    ).toEqual([3, 1]);
  });
});
