import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface RawProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

export interface ProfileSummary {
  file: string;
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
  const own = /\/(src\/[^/]+|emulator\/[^/]+|bin)\//.exec(url);
  return own ? own[1]! : "other";
}

/**
 * The `--cpu-prof` arguments that write the service's profiles into `dir` when it exits: one per
 * thread (tsx's module loader runs in a worker thread of its own), named by pid and thread id.
 * @example startService({ python, label, nodeArgs: cpuProfArgs(tmp) })
 */
export function cpuProfArgs(dir: string): string[] {
  return ["--cpu-prof", "--cpu-prof-dir", dir];
}

/**
 * Sums self time by area and by function of the main thread's profile (thread id 0 in the name
 * `node --cpu-prof` gives it) in `dir`, and copies it to `keep`; null when there is none.
 * @example const summary = summarizeProfile(tmp, "bench/results/profile-service.cpuprofile.json");
 */
export function summarizeProfile(dir: string, keep: string): ProfileSummary | null {
  const name = readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!name) return null;
  const file = keep;
  copyFileSync(join(dir, name), keep);
  const raw = JSON.parse(readFileSync(keep, "utf8")) as RawProfile;
  const interval = (raw.endTime - raw.startTime) / 1000 / Math.max(1, raw.samples.length);
  const hits = new Map<number, number>();
  for (const id of raw.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const node of raw.nodes) {
    const ms = (node.hitCount ?? hits.get(node.id) ?? 0) * interval;
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
    file,
    busyMs: busy,
    idleMs: idle,
    areas: ranked(byArea, 10).map(([a, ms]) => ({ area: a, pct: (100 * ms) / busy })),
    top: ranked(byFn, 12).map(([fn, ms]) => ({ fn, pct: (100 * ms) / busy })),
  };
}
