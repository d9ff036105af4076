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
): Row {
  const ratio = ratioOf({ ours, floor });
  const met = check && ours !== null && Number.isFinite(ours) ? check(ours, ratio) : null;
  return { figure, unit, ours, floor, floorName, target, met, ...(note ? { note } : {}) };
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
 * ("faster than default" only when a row has it).
 */
export function formatTable(rows: Row[]): string {
  const versus = rows.some((r) => r.versus);
  const head = [
    "figure",
    "ours",
    "floor",
    "ratio",
    ...(versus ? ["faster than default"] : []),
    "target",
    "met?",
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
      r.met === null ? "–" : r.met ? "met" : "NOT MET",
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
