import { execa } from "execa";
import { describe, expect, it } from "vitest";

// In a fresh Node process: the service's whole module graph, then loadTracing. OpenTelemetry's
// packages are CommonJS, so whatever got loaded is in the CommonJS module cache. The API
// package (a no-op facade) is not counted: prom-client's default CPU metric requires it for
// exemplars, tracing or not. The SDK, the exporter, resources and core are what tracing costs.
const PROBE = `
import { createRequire } from "node:module";
await import("./src/platform/node.ts");
const { loadTracing } = await import("./src/observe/tracing.ts");
const tracing = await loadTracing(process.env);
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes("@opentelemetry/") && !k.includes("@opentelemetry/api/"));
console.log(JSON.stringify({ tracing: tracing !== null, loaded: loaded.length }));
await tracing?.shutdown();
`;

async function probe(env: Record<string, string>) {
  const {
    OTEL_EXPORTER_OTLP_ENDPOINT: _a,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _b,
    ...base
  } = process.env;
  const r = await execa("node", ["--import", "tsx", "--input-type=module", "-e", PROBE], {
    env: { ...base, ...env },
    extendEnv: false,
    cwd: new URL("../..", import.meta.url),
  });
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { tracing: boolean; loaded: number };
}

describe("tracing is loaded lazily", () => {
  it("loads no OpenTelemetry module without the OTEL_* variables, and loads it with them", async () => {
    expect(await probe({})).toEqual({ tracing: false, loaded: 0 });
    const on = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(on.tracing).toBe(true);
    expect(on.loaded).toBeGreaterThan(0);
  }, 60_000);
});
