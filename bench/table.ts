import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One line of the results table: a figure of ours next to its floor from the same run. */
export interface Row {
  figure: string;
  unit: string;
  ours: number | null;
  floor: number | null;
  /** What the floor is, e.g. "bare Hono route". */
  floorName: string;
  /** Human-readable target, e.g. "< 1 ms"; empty when there is none. */
  target: string;
  /** null: no target, or the figure could not be measured. */
  met: boolean | null;
  note?: string;
  /** Against the default configuration, e.g. "+4.2 % (default 1.31)": the comparison column. */
  versus?: string;
  /** How far from its target, e.g. "5.14 ms over (6.1× the limit)" or "18 % above". */
  by?: string;
  /** The same target in another configuration (an A/B phase), as `verdict` says it, by column. */
  alternatives?: Record<string, string>;
}

/**
 * A judged row in a few words: its figure and whether it meets its target, by how much.
 * @example verdict(targetRow("p50", "ms", 1.2, null, "", { limit: 2, below: true })) // "1.20 ms: met (0.800 ms to spare …)"
 */
export function verdict(r: Row): string {
  if (r.met === null) return "–";
  return `${num(r.ours, r.unit)}: ${r.met ? "met" : "NOT MET"}${r.by ? ` (${r.by})` : ""}`;
}

/**
 * A numeric target: `ours` (or the ratio ours / floor) below `limit`, or at least `limit`.
 * @example { limit: 2, below: true } // "< 2 ms"
 */
export interface Goal {
  limit: number;
  below: boolean;
  /** Judge the ratio to the floor instead of the figure itself. */
  on?: "ratio";
}

/**
 * A row whose ratio is ours / floor; `check` decides the target from (ours, ratio).
 * @example row("sync p50", "ms", 1.2, 0.3, "ThreadingHTTPServer", "< 2 ms", (v) => v < 2)
 */
export function row(
  figure: string,
  unit: string,
  ours: number | null,
  floor: number | null,
  floorName: string,
  target = "",
  check?: (ours: number, ratio: number | null) => boolean,
  note?: string,
  goal?: Goal,
): Row {
  const ratio = ratioOf({ ours, floor });
  const met = check && ours !== null && Number.isFinite(ours) ? check(ours, ratio) : null;
  const value = goal?.on === "ratio" ? ratio : ours;
  const by = goal && value !== null && Number.isFinite(value) ? margin(value, goal, unit) : null;
  return {
    figure,
    unit,
    ours,
    floor,
    floorName,
    target,
    met,
    ...(note ? { note } : {}),
    ...(by ? { by } : {}),
  };
}

/**
 * How far `value` is from its goal, in the goal's terms.
 * @example margin(7.1, { limit: 1, below: true }, "ms") // "6.10 ms over (7.1× the limit)"
 */
export function margin(value: number, goal: Goal, unit: string): string {
  const times = value / goal.limit;
  if (goal.on === "ratio") {
    const off = goal.below ? times : 1 / times;
    const against = `${goal.below ? "<" : "≥"} ${goal.limit.toFixed(2)}×`;
    const met = goal.below ? value < goal.limit : value >= goal.limit;
    return `${value.toFixed(2)}× the floor, target ${against}${met ? "" : ` (${off.toFixed(1)}× off)`}`;
  }
  const n = (x: number) => `${num(x)}${unit ? ` ${unit}` : ""}`;
  if (goal.below) {
    return value < goal.limit
      ? `${n(goal.limit - value)} to spare (${times.toFixed(2)}× the limit)`
      : `${n(value - goal.limit)} over (${times.toFixed(1)}× the limit)`;
  }
  return value >= goal.limit
    ? `${((times - 1) * 100).toFixed(0)} % above the minimum`
    : `${n(goal.limit - value)} short (${(times * 100).toFixed(0)} % of the minimum)`;
}

export function ratioOf(r: Pick<Row, "ours" | "floor">): number | null {
  return r.ours !== null && r.floor !== null && r.floor !== 0 ? r.ours / r.floor : null;
}

function num(n: number | null, unit = ""): string {
  if (n === null || !Number.isFinite(n)) return "–";
  const abs = Math.abs(n);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return `${n.toFixed(digits)}${unit ? ` ${unit}` : ""}`;
}

/**
 * The table as aligned text: figure | ours | floor | ratio | faster than default | target | met?
 * ("faster than default" only when a row has it; "met?" says by how much where a row has a goal).
 */
export function formatTable(rows: Row[]): string {
  const versus = rows.some((r) => r.versus);
  const others = [...new Set(rows.flatMap((r) => Object.keys(r.alternatives ?? {})))];
  const head = [
    "figure",
    "ours",
    "floor",
    "ratio",
    ...(versus ? ["faster than default"] : []),
    "target",
    "met?",
    ...others,
  ];
  const body = rows.map((r) => {
    const ratio = ratioOf(r);
    return [
      r.figure,
      num(r.ours, r.unit),
      r.floor === null ? r.floorName : `${num(r.floor, r.unit)} (${r.floorName})`,
      ratio === null ? "–" : `${ratio.toFixed(2)}×`,
      ...(versus ? [r.versus ?? "–"] : []),
      r.target || "–",
      r.met === null ? "–" : `${r.met ? "met" : "NOT MET"}${r.by ? `: ${r.by}` : ""}`,
      ...others.map((o) => r.alternatives?.[o] ?? "–"),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(head), rule, ...body.map(line)].join("\n");
}

/** Writes `bench/results/<ISO time>.json` and `bench/results/latest.json`; returns the first path. */
export function writeResults(results: unknown, at = new Date()): string {
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const path = `${dir}${at.toISOString().replace(/:/g, "-")}.json`;
  writeFileSync(path, text);
  writeFileSync(`${dir}latest.json`, text);
  return path;
}

/**
 * A row with a numeric target, said as "< 2 ms" / "≥ 400 /s" (or of the ratio to the floor),
 * judged, and with how far it is from it. `extra` must hold as well for the target to be met.
 * @example targetRow("sync p50", "ms", 4.7, 0.3, "ThreadingHTTPServer", { limit: 2, below: true })
 */
export function targetRow(
  figure: string,
  unit: string,
  ours: number | null,
  floor: number | null,
  floorName: string,
  goal: Goal,
  opts: { text?: string; extra?: () => boolean; note?: string } = {},
): Row {
  const u = goal.on === "ratio" ? "× the floor" : unit ? ` ${unit}` : "";
  const text = opts.text ?? `${goal.below ? "<" : "≥"} ${goal.limit}${u}`;
  const check = (v: number, ratio: number | null) => {
    const value = goal.on === "ratio" ? ratio : v;
    if (value === null) return false;
    const ok = goal.below ? value < goal.limit : value >= goal.limit;
    return ok && (opts.extra?.() ?? true);
  };
  return row(figure, unit, ours, floor, floorName, text, check, opts.note, goal);
}
