import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startOtlpReceiver } from "../../test/support/otlp.ts";
import { consoleLogger } from "../log.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { guardStorage } from "../storage/unavailable.ts";
import { createObserver } from "./observer.ts";
import { loadTracing, type Tracing } from "./tracing.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  vi.unstubAllEnvs();
});

/**
 * Tracing as the service loads it (`loadTracing(process.env)`), exporting to a receiver this
 * test runs; `env` holds the variables a user sets besides the endpoint.
 */
async function traced(env: Record<string, string>) {
  const otlp = await startOtlpReceiver();
  cleanups.push(otlp.close);
  vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.url);
  vi.stubEnv("SVC_TRACE_STORAGE_MS", undefined);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const tracing = (await loadTracing(process.env)) as Tracing;
  expect(tracing, "tracing with an OTLP endpoint set").not.toBeNull();
  /** Sends what is buffered and returns the storage spans received. */
  const storageSpans = async () => {
    await tracing.shutdown();
    return otlp.spans.filter((s) => s.name.startsWith("storage "));
  };
  return { tracing, otlp, storageSpans };
}

describe("slow storage calls get a span (SVC_TRACE_STORAGE_MS)", () => {
  it("spans a call slower than SVC_TRACE_STORAGE_MS, with its op and duration, and not a faster one", async () => {
    const { tracing, storageSpans } = await traced({ SVC_TRACE_STORAGE_MS: "100" });
    const t0 = Date.now();
    tracing.storageCall("getItem", t0, 150, true);
    tracing.storageCall("setItem", t0, 60, true);
    tracing.storageCall("getKeys", t0, 120, false);
    const spans = await storageSpans();
    expect(
      spans.map((s) => s.name),
      "SVC_TRACE_STORAGE_MS=100: the 150 ms and 120 ms calls get a span, the 60 ms one none",
    ).toEqual(["storage getItem", "storage getKeys"]);
    const [slow, failed] = spans;
    expect(slow!.attributes).toEqual({
      "hookline.storage.op": "getItem",
      "hookline.storage.duration_ms": 150,
    });
    // Placed back in time: it starts when the call did, and lasts what it took.
    expect(slow!.startNs).toBe(BigInt(t0) * 1_000_000n);
    expect(slow!.endNs - slow!.startNs).toBe(150_000_000n);
    expect(slow!.parentSpanId, "no request being served: no parent").toBe("");
    expect(failed!.status.code, "a failed call's span is an error").toBe(2);
  });

  it("spans calls past 50 ms when SVC_TRACE_STORAGE_MS is not set", async () => {
    const { tracing, storageSpans } = await traced({});
    const t0 = Date.now();
    tracing.storageCall("getItem", t0, 80, true);
    tracing.storageCall("setItem", t0, 20, true);
    expect(
      (await storageSpans()).map((s) => s.name),
      "by default (50 ms) the 80 ms call gets a span, the 20 ms one none",
    ).toEqual(["storage getItem"]);
  });

  it("puts a slow call's span under the request being served", async () => {
    const { tracing, otlp, storageSpans } = await traced({ SVC_TRACE_STORAGE_MS: "10" });
    const app = new Hono();
    app.use(tracing.request);
    app.get("/api/v1/projects", (c) => {
      tracing.storageCall("getItem", Date.now() - 30, 30, true);
      return c.text("ok");
    });
    expect((await app.request("http://localhost/api/v1/projects")).status).toBe(200);
    const [span] = await storageSpans();
    const request = otlp.spans.find((s) => s.name === "GET /api/v1/projects");
    expect(span?.parentSpanId, "the storage span's parent is the request's span").toBe(
      request?.spanId,
    );
    expect(span?.traceId).toBe(request?.traceId);
  });

  it("spans a real storage call that took longer than the threshold, through the storage guard", async () => {
    const { tracing, storageSpans } = await traced({ SVC_TRACE_STORAGE_MS: "100" });
    const observer = createObserver({ tracing, log: consoleLogger(() => {}) });
    const inner = createStorageFromUrl("memory:");
    const getItem = inner.getItem.bind(inner);
    inner.getItem = (async (key: string) => {
      if (key === "slow") await new Promise((r) => setTimeout(r, 150));
      return getItem(key);
    }) as typeof inner.getItem;
    const storage = guardStorage(inner, observer.storageCall);
    await storage.getItem("slow");
    await storage.getItem("fast");
    const spans = await storageSpans();
    expect(
      spans.map((s) => s.name),
      "the 150 ms getItem gets a span, the fast one none",
    ).toEqual(["storage getItem"]);
    expect(spans[0]!.attributes["hookline.storage.duration_ms"]).toBeGreaterThanOrEqual(140);
  });
});
