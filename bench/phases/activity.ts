import type { Bench } from "../context.ts";
import { median } from "../stats.ts";
import { row } from "../table.ts";

export const CALLS = 200;
const ROUNDS = 3;
const PER_ROUND = 6;

interface Timing {
  activity_us: number | null;
  direct_us: number | null;
}

/**
 * The cost of one activity call: a sync handler calling a trivial activity N times, N = 0 and
 * N = CALLS in alternating rounds; per call = (median round trip at N − at 0) / N. The handler's
 * own timing of its loop is kept beside it, and a plain project function call is the floor. A
 * durable step under a retry policy that never retries is measured against one without.
 */
export async function activityPhase(b: Bench, hooks: Record<string, string>) {
  const perCall: Record<string, { e2eUs: number; inHandlerUs: number }> = {};
  const startMs: Record<string, number> = {};
  let directUs = Number.NaN;
  // Rounds alternate between the triggers too, so a policy set and unused is measured beside
  // the same durable step without one, under the same load.
  const triggers = ["plain", "durable", "durable_retry"] as const;
  const runs = Object.fromEntries(
    triggers.map((t) => [
      t,
      { zero: [] as number[], many: [] as number[], inHandler: [] as number[] },
    ]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const trigger of triggers) {
      const { zero, many, inHandler } = runs[trigger]!;
      for (const n of [0, CALLS]) {
        const r = await b.load(`activity.${trigger}.n${n}.r${round}`, {
          url: hooks[trigger]!,
          body: JSON.stringify({ n }),
          concurrency: 1,
          count: PER_ROUND,
          warmup: round === 0 ? 2 : 0,
          detail: true,
          maxMs: 30_000,
        });
        for (const d of r.details ?? []) {
          if (d.status !== 201)
            throw new Error(`activity ${trigger} n=${n}: ${d.status} ${d.body}`);
          (n === 0 ? zero : many).push(d.end - d.start);
          const t = JSON.parse(d.body) as Timing;
          if (t.activity_us !== null) inHandler.push(t.activity_us);
        }
      }
    }
  }
  for (const trigger of triggers) {
    const { zero, many, inHandler } = runs[trigger]!;
    startMs[trigger] = median(zero);
    perCall[trigger] = {
      e2eUs: ((median(many) - median(zero)) / CALLS) * 1000,
      inHandlerUs: median(inHandler),
    };
  }
  const direct = await b.load("activity.direct", {
    url: hooks.plain!,
    body: JSON.stringify({ n: 0, direct: 20_000 }),
    concurrency: 1,
    count: 5,
    detail: true,
  });
  directUs = median(
    (direct.details ?? []).map((d) => (JSON.parse(d.body) as Timing).direct_us ?? Number.NaN),
  );
  b.data["activity.perCall"] = { ...perCall, directUs, startMs };
  await b.svc.idle(30_000);

  const floor = "plain function call";
  const plain = perCall.plain!;
  const durable = perCall.durable!;
  b.rows.push(
    row(
      `non-durable activity, per call (N=${CALLS} vs 0)`,
      "µs",
      plain.e2eUs,
      directUs,
      floor,
      "< 50 µs",
      (v) => v < 50,
    ),
    row("  same, timed inside the handler", "µs", plain.inHandlerUs, directUs, floor),
    row(
      `durable step, per call (N=${CALLS} vs 0)`,
      "µs",
      durable.e2eUs,
      directUs,
      floor,
      "< 500 µs",
      (v) => v < 500,
    ),
    row("  same, timed inside the handler", "µs", durable.inHandlerUs, directUs, floor),
    row(
      "durable step, a retry policy set and unused, in the handler",
      "µs",
      perCall.durable_retry!.inHandlerUs,
      durable.inHandlerUs,
      "durable step, no policy",
      "≤ 1.15× (noise)",
      (_v, ratio) => ratio !== null && ratio <= 1.15,
      `end to end ${perCall.durable_retry!.e2eUs.toFixed(1)} µs against ${durable.e2eUs.toFixed(1)} µs`,
    ),
    row(
      "sync round trip N=0, durable vs non-durable, p50",
      "ms",
      startMs.durable!,
      startMs.plain!,
      "non-durable",
      "",
      undefined,
      "the difference is the journal read at a durable start (see breakdown)",
    ),
  );
}
