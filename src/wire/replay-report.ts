import * as v from "valibot";

// What `cli deploy --check-replay` reports, declared once: the service builds it (src/deploy/
// replay-check.ts), the deploy answer and its 409 carry it, `GET /api/v1/projects/{ref}/
// replay-check` and the UI's deploy page show the latest, and the CLI prints its lines. Valibot
// only, so the CLI can import it without pulling in the service.

const count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** One session whose journal the new code does not take as recorded (or could not be checked). */
export const DivergingSessionSchema = v.object({
  session_id: v.string(),
  /** Its state: `running` (or `created`) is in flight; the others ended. */
  state: v.string(),
  in_flight: v.boolean(),
  /** The step where the new code leaves the journal's path. */
  step: count,
  /** What the journal holds there, and what the new code does instead. */
  journal: v.string(),
  code: v.string(),
  /** The check could not tell (it timed out, or its process died): not counted as diverging. */
  unknown: v.optional(v.boolean()),
});

export const ReplayReportSchema = v.object({
  project: v.string(),
  /** The build checked: the deploy's new one. */
  build_id: v.string(),
  /** When the check ran (ISO-8601). */
  at: v.string(),
  /** Durable sessions replayed: those in flight, and the newest ended ones (at most the N asked). */
  checked: v.object({ in_flight: count, ended: count }),
  /** Sessions it did not replay, and why (their event is no longer stored, past the cap). */
  not_checked: count,
  diverging: v.array(DivergingSessionSchema),
  /** `passed`: nothing in flight diverges; `stopped`: the deploy did not happen; `forced`: it did. */
  outcome: v.picklist(["passed", "stopped", "forced"]),
  /** The deployment made, when the deploy went ahead. */
  deployment_id: v.optional(v.string()),
});

export type DivergingSession = v.InferOutput<typeof DivergingSessionSchema>;
export type ReplayReport = v.InferOutput<typeof ReplayReportSchema>;

/**
 * A report as `cli deploy --check-replay` prints it: one `[check]` line per session that
 * diverges (or could not be checked), then what was replayed and the outcome.
 * @example replayLines(report)
 *   // ['[check] ses_… (in flight) diverges at step 1: the journal has activity h.charge; the new code activity h.refund', …]
 */
export function replayLines(r: ReplayReport): string[] {
  const lines = r.diverging.map((d) => {
    const where = d.in_flight ? "in flight" : `ended ${d.state}`;
    const what = d.unknown ? "could not be checked" : "diverges";
    return `[check] ${d.session_id} (${where}) ${what} at step ${d.step}: the journal has ${d.journal}; the new code ${d.code}`;
  });
  const real = r.diverging.filter((d) => !d.unknown);
  const inFlight = real.filter((d) => d.in_flight).length;
  const verdict = real.length
    ? `${real.length} diverge${real.length === 1 ? "s" : ""} (${inFlight} in flight)`
    : "none diverges";
  const skipped = r.not_checked ? `; ${r.not_checked} not checked` : "";
  lines.push(
    `[check] replayed ${r.checked.in_flight} in-flight and ${r.checked.ended} ended durable sessions of "${r.project}" against the new build: ${verdict}${skipped}`,
  );
  if (r.outcome === "forced") lines.push("[check] --force: deploying anyway");
  return lines;
}
