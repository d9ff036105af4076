import { Session } from "node:inspector/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  /** Sampled ms the main thread was busy (idle excluded). */
  busyMs: number;
  idleMs: number;
  /** Share of busy time by area (hono, node-server, unstorage, src/…, node internals, GC). */
  areas: { area: string; pct: number }[];
  /** The functions with the most self time. */
  top: { fn: string; pct: number }[];
}

function area(url: string, fn: string): string {
  if (fn === "(garbage collector)" || fn === "(program)" || fn === "(idle)") return fn;
  if (!url) return "V8/native";
  if (url.startsWith("node:")) return "node internals";
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (m) return m[1]!;
  const own = /\/(src\/[^/]+|emulator\/[^/]+|bench)\//.exec(url);
  return own ? own[1]! : "other";
}

/**
 * Samples this process's main thread while `work` runs (the V8 CPU profiler over the inspector
 * protocol, as `node --cpu-prof` does) and sums self time by area and by function.
 * @example const { summary } = await profile(() => client.run(spec));
 */
export async function profile<T>(
  work: () => Promise<T>,
): Promise<{ result: T; summary: ProfileSummary; raw: unknown }> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
    const result = await work();
    const { profile: raw } = (await session.post("Profiler.stop")) as {
      profile: { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[] };
    };
    const interval = (raw.endTime - raw.startTime) / 1000 / Math.max(1, raw.samples.length);
    const byArea = new Map<string, number>();
    const byFn = new Map<string, number>();
    let busy = 0;
    let idle = 0;
    for (const node of raw.nodes) {
      const ms = (node.hitCount ?? 0) * interval;
      if (!ms) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      if (functionName === "(idle)") {
        idle += ms;
        continue;
      }
      busy += ms;
      const a = area(url, functionName);
      byArea.set(a, (byArea.get(a) ?? 0) + ms);
      const where = url
        ? ` ${url.replace(/^.*\/(node_modules\/|src\/|emulator\/)/, "$1")}:${lineNumber + 1}`
        : "";
      const key = `${functionName || "(anonymous)"}${where}`;
      byFn.set(key, (byFn.get(key) ?? 0) + ms);
    }
    const ranked = (m: Map<string, number>, n: number) =>
      [...m].sort((x, y) => y[1] - x[1]).slice(0, n);
    return {
      result,
      raw,
      summary: {
        busyMs: busy,
        idleMs: idle,
        areas: ranked(byArea, 10).map(([a, ms]) => ({ area: a, pct: (100 * ms) / busy })),
        top: ranked(byFn, 12).map(([fn, ms]) => ({ fn, pct: (100 * ms) / busy })),
      },
    };
  } finally {
    await session.post("Profiler.disable").catch(() => {});
    session.disconnect();
  }
}
