import { createServer } from "node:http";
import { type Bench, JSON_BODY } from "../context.ts";
import { cpuSplit } from "../cpu.ts";
import { startService } from "../service.ts";
import { row } from "../table.ts";

/** Sync requests per measured run; two runs of each setting, interleaved (off, on, off, on). */
const COUNT = 400;

/** An OTLP/HTTP sink: answers every export at once, counts what it got. */
async function otlpSink() {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (c: Buffer) => {
      bytes += c.length;
    });
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ exports, bytes }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * What tracing costs: the sync round trip at c=1 on two fresh services, one without `OTEL_*`
 * (tracing off: nothing of OpenTelemetry loaded) and one exporting every span to a local OTLP
 * sink (sampler always on), each run twice, interleaved. Latency is noisy on a shared machine;
 * the service's CPU per request (its process, all threads, from /proc) is the steadier figure.
 * @example await phase(b, "tracing", () => tracingPhase(b));
 */
export async function tracingPhase(b: Bench): Promise<void> {
  const sink = await otlpSink();
  const runs: Record<"off" | "on", { p50: number[]; cpu: number[] }> = {
    off: { p50: [], cpu: [] },
    on: { p50: [], cpu: [] },
  };
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: "200" };
  try {
    for (const setting of ["off", "on", "off", "on"] as const) {
      const svc = await startService({
        python: b.python,
        label: `tracing ${setting}`,
        env: setting === "on" ? on : {},
      });
      try {
        const trivial = await svc.deploy("trivial");
        const spec = { body: JSON_BODY, concurrency: 1, maxMs: 40_000, url: trivial.hooks.sync! };
        await b.load(`tracing.${setting}.warmup`, { ...spec, count: 50, warmup: 0 });
        const stop = cpuSplit(svc.pid, b.client.pid!);
        const r = await b.load(`tracing.${setting}`, { ...spec, count: COUNT, warmup: 0 });
        await svc.idle(30_000);
        const cpu = stop();
        runs[setting].p50.push(r.latency.p50);
        runs[setting].cpu.push((cpu.serviceMain + cpu.serviceThreads) / r.completed);
      } finally {
        await svc.close();
      }
    }
  } finally {
    await sink.close();
  }
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const off = { p50: mean(runs.off.p50), cpu: mean(runs.off.cpu) };
  const onM = { p50: mean(runs.on.p50), cpu: mean(runs.on.cpu) };
  const sent = sink.counts();
  b.data.tracing = { runs, sink: sent, requests: 2 * COUNT };
  const base = "tracing off (no OTEL_*)";
  b.rows.push(
    row(
      "sync p50 c=1, tracing off",
      "ms",
      off.p50,
      null,
      "",
      "",
      undefined,
      runs.off.p50.map((v) => v.toFixed(3)).join(", "),
    ),
    row("sync p50 c=1, tracing on", "ms", onM.p50, off.p50, base),
    row("service CPU per sync request, tracing off", "ms", off.cpu, null, ""),
    row("service CPU per sync request, tracing on", "ms", onM.cpu, off.cpu, base),
  );
  b.notes.push(
    `- tracing: ${2 * COUNT} sync requests per setting; service CPU per request ${off.cpu.toFixed(3)} ms off ` +
      `(runs ${runs.off.cpu.map((v) => v.toFixed(3)).join(", ")}), ${onM.cpu.toFixed(3)} ms on ` +
      `(runs ${runs.on.cpu.map((v) => v.toFixed(3)).join(", ")}); the sink got ${sent.exports} OTLP exports, ` +
      `${(sent.bytes / 1024).toFixed(0)} KiB (${(sent.bytes / (2 * COUNT + 100)).toFixed(0)} bytes per request)`,
  );
}
