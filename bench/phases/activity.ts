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
 * own timing of its loop is kept beside it, and a plain project function call is the floor.
 */
export async function activityPhase(b: Bench, hooks: Record<string, string>) {
  const perCall: Record<string, { e2eUs: number; inHandlerUs: number }> = {};
  const startMs: Record<string, number> = {};
  let directUs = Number.NaN;
  for (const trigger of ["plain", "durable"] as const) {
    const zero: number[] = [];
    const many: number[] = [];
    const inHandler: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
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
