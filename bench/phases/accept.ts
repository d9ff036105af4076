import { type Bench, JSON_BODY } from "../context.ts";
import { cpuLine, cpuMs, cpuSplit, procTimes } from "../cpu.ts";
import { startDurableFloor, startHonoFloor } from "../floors.ts";
import { row, targetRow } from "../table.ts";

/**
 * Requests sent before any is measured, ours as the bare route's: a service just started runs
 * its code cold (in the closing runs of issue 41, the front thread's CPU per accept was 0.43-0.50
 * ms in the phase's first measurement after 40 of them, 0.26-0.37 ms in the later rounds).
 */
const WARMUP = 200;

/**
 * Our async accept at concurrency 1, a session per request (they run meanwhile); waits until the
 * sessions are done. The storage comparison runs the same.
 * @example const r = await measureAccept(b, trivial.hooks.accept!);
 */
export async function measureAccept(b: Bench, url: string) {
  const stop = cpuSplit(b.svc.pid, b.client.pid!);
  const r = await b.load(`accept.session.c1.${b.svc.label}`, {
    body: JSON_BODY,
    concurrency: 1,
    count: 400,
    warmup: WARMUP,
    maxMs: 20_000,
    url,
  });
  await b.svc.idle(60_000);
  // CPU holds up under load where latency does not: per accepted request, its session included.
  const cpu = stop();
  b.data[`accept.session.c1.${b.svc.label}.cpu`] = cpu;
  b.notes.push(
    `- async accept c=1, ${b.svc.label}, each request's session run to its end: ${cpuLine(cpu, 400 + WARMUP, "accept")}`,
  );
  return r;
}

/** The accept's two floors' requests/s at c=32, for the sessions phase's burst. */
export interface AcceptFloors {
  /** The bare route. */
  bareRps: number;
  /** The route that commits each request to LMDB before it answers. */
  durableRps: number;
}

/**
 * Async accept at concurrency 1: our webhook (a session starts per request, and a call-less
 * trigger that only stores the event) against a bare Hono route that reads the body and answers
 * 202, and against the same route committing each request to LMDB first (the durable floor: no
 * accept that keeps its event before it answers, as ours does, can be faster on this store).
 * The requests/s at concurrency 32 of both routes are measured here too; ours is measured by the
 * sessions phase, which is the same 32-wide burst of async webhooks.
 */
export async function acceptPhase(b: Bench, hooks: Record<string, string>): Promise<AcceptFloors> {
  const floor = await startHonoFloor();
  const durable = await startDurableFloor();
  try {
    const spec = { body: JSON_BODY, concurrency: 1, count: 1500, warmup: WARMUP, maxMs: 20_000 };
    const bare1 = await b.load("accept.bare.c1", { ...spec, url: floor.url });
    const durable1 = await b.load("accept.durable.c1", { ...spec, url: durable.url });
    const stopStore = cpuSplit(b.svc.pid, b.client.pid!);
    const store1 = await b.load("accept.store_only.c1", { ...spec, url: hooks.store_only! });
    const storeCpu = stopStore();
    b.data["accept.store_only.c1.cpu"] = storeCpu;
    b.notes.push(
      `- call-less trigger c=1 (the accept path without a session): ${cpuLine(storeCpu, spec.count + spec.warmup, "request")}`,
    );
    const ours1 = await measureAccept(b, hooks.accept!);
    b.figures[b.svc.label] = { ...b.figures[b.svc.label], acceptP50: ours1.latency.p50 };
    // The three at c=32 alike; CPU per request counts the warm-up's requests too.
    const c32 = { body: JSON_BODY, concurrency: 32, count: 6000, warmup: 500, maxMs: 20_000 };
    const sent32 = c32.count + c32.warmup;
    const floorCpu = procTimes(floor.pid);
    const bare32 = await b.load("accept.bare.c32", { ...c32, url: floor.url });
    const floorUs = (1000 * cpuMs(floorCpu, procTimes(floor.pid))) / sent32;
    const durable32 = await b.load("accept.durable.c32", { ...c32, url: durable.url });
    const stopStore32 = cpuSplit(b.svc.pid, b.client.pid!);
    const store32 = await b.load("accept.store_only.c32", { ...c32, url: hooks.store_only! });
    const store32Cpu = stopStore32();
    b.data["accept.store_only.c32.cpu"] = store32Cpu;
    b.notes.push(`- call-less trigger c=32: ${cpuLine(store32Cpu, sent32, "request")}`);
    b.floors.acceptP50 = bare1.latency.p50;
    b.floors.acceptRps = bare32.rps;
    const bare = "bare Hono route";
    const durableName = "route + one LMDB commit";
    b.rows.push(
      targetRow("async accept p50, c=1", "ms", ours1.latency.p50, bare1.latency.p50, bare, {
        limit: 1,
        below: true,
      }),
      targetRow("async accept p99, c=1", "ms", ours1.latency.p99, bare1.latency.p99, bare, {
        limit: 5,
        below: true,
      }),
      // The same two against the floor of this run: what holds on any machine.
      targetRow(
        "async accept p50, c=1, × the bare route",
        "ms",
        ours1.latency.p50,
        bare1.latency.p50,
        bare,
        { limit: 2, below: true, on: "ratio" },
        { text: "≤ 2× the floor" },
      ),
      targetRow(
        "async accept p99, c=1, × the bare route's p99",
        "ms",
        ours1.latency.p99,
        bare1.latency.p99,
        bare,
        { limit: 4, below: true, on: "ratio" },
        { text: "≤ 4× the floor's p99" },
      ),
      row(
        "  the durable floor: bare route + one LMDB commit (sync=normal) p50",
        "ms",
        durable1.latency.p50,
        bare1.latency.p50,
        bare,
      ),
      row(
        "  async accept p50, c=1, × the durable floor",
        "ms",
        ours1.latency.p50,
        durable1.latency.p50,
        durableName,
      ),
      row(
        "  same, call-less trigger (no session) p50",
        "ms",
        store1.latency.p50,
        bare1.latency.p50,
        bare,
      ),
      row(
        "  same, call-less trigger (no session) p99",
        "ms",
        store1.latency.p99,
        bare1.latency.p99,
        bare,
      ),
      row("  call-less trigger req/s, c=32", "req/s", store32.rps, bare32.rps, bare),
      row("  the durable floor req/s, c=32", "req/s", durable32.rps, bare32.rps, bare),
    );
    // The work behind the c=32 figures: a request's CPU on the front door's thread (it has one
    // core at most) against the bare route's whole process.
    if (!Number.isNaN(store32Cpu.frontRun)) {
      b.rows.push(
        row(
          "  CPU per call-less request, c=32: the front door's thread",
          "µs",
          (1000 * store32Cpu.frontRun) / sent32,
          floorUs,
          "the bare route's process",
        ),
      );
    }
    return { bareRps: bare32.rps, durableRps: durable32.rps };
  } finally {
    await floor.close();
    await durable.close();
  }
}
