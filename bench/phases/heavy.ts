import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Bench, JSON_BODY } from "../context.ts";
import type { Deployed } from "../service.ts";
import { median } from "../stats.ts";
import { row, targetRow } from "../table.ts";
import { faultsRow } from "./sessions.ts";
import { measureSync } from "./sync.ts";

const heavyDir = fileURLToPath(new URL("../fixtures/heavy/", import.meta.url));

/** ms to `import handlers` in a fresh interpreter that has imported workflow_sdk (median of 5). */
function importMs(python: string): { median: number; runs: number[]; importtimeMs: number } {
  const timed = [
    "import sys, time",
    `sys.path.insert(0, ${JSON.stringify(heavyDir)})`,
    "import workflow_sdk",
    "t = time.perf_counter()",
    "import handlers",
    "print((time.perf_counter() - t) * 1000)",
  ].join("\n");
  const runs: number[] = [];
  // The first run may write the module's .pyc; it counts as a warm-up.
  for (let i = 0; i < 6; i++) {
    const ms = Number(execFileSync(python, ["-c", timed], { encoding: "utf8" }).trim());
    if (i > 0) runs.push(ms);
  }
  // -X importtime's cumulative figure for the handlers module (its own imports included).
  const { stderr } = spawnSync(
    python,
    [
      "-X",
      "importtime",
      "-c",
      `import sys; sys.path.insert(0, ${JSON.stringify(heavyDir)}); import handlers`,
    ],
    { encoding: "utf8" },
  );
  const m = /\|\s*(\d+)\s*\|\s*handlers\s*$/m.exec(stderr ?? "");
  return { median: median(runs), runs, importtimeMs: m ? Number(m[1]) / 1000 : Number.NaN };
}

/**
 * The sync round trip with a handler module whose imports take tens of ms in a fresh
 * interpreter: the first request of the deployment (runs cold and starts its warm server), then
 * p50/p99 at c=1 once the warm server has done the import.
 * @example await heavyPhase(b, await svc.deploy("heavy"));
 */
export async function heavyPhase(b: Bench, heavy: Deployed) {
  const imp = importMs(b.python);
  b.data["heavy.import"] = imp;
  const first = await b.load("heavy.first", {
    url: heavy.hooks.sync!,
    body: JSON_BODY,
    concurrency: 1,
    count: 1,
  });
  b.notes.push(
    `- heavy fixture: \`import handlers\` in a fresh interpreter ${imp.median.toFixed(1)} ms (median of ${imp.runs.length}, ` +
      `after workflow_sdk); \`python -X importtime\` cumulative for handlers ${imp.importtimeMs.toFixed(1)} ms`,
  );
  const { c1, cpu1 } = await measureSync(b, heavy.hooks.sync!, { c16: false, tag: "heavy" });
  const floor = b.floors.syncP50 ?? null;
  const floor99 = b.floors.syncP99 ?? null;
  const tp = "ThreadingHTTPServer";
  b.rows.push(
    row(
      "heavy handler: import in a fresh interpreter (median of 5)",
      "ms",
      imp.median,
      null,
      "python -c, after import workflow_sdk",
      "≥ 30 ms (the fixture is heavy)",
      (v) => v >= 30,
    ),
    row("heavy: first request after deploy (runs cold)", "ms", first.latency.p50, floor, tp),
    targetRow("heavy: sync round trip p50, c=1", "ms", c1.latency.p50, floor, tp, {
      limit: 2,
      below: true,
    }),
    targetRow("heavy: sync round trip p99, c=1", "ms", c1.latency.p99, floor99, tp, {
      limit: 10,
      below: true,
    }),
    faultsRow("heavy: faults per sync session, c=1", cpu1, c1.completed + 30),
  );
}
