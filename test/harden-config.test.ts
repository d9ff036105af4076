import { describe, expect, it } from "vitest";
import { resolveSettings } from "../src/config.ts";
import { serverOptions } from "../src/platform/server-options.ts";

describe("the hardening settings", () => {
  it("have defaults, read SVC_* variables in seconds, and refuse bad values", () => {
    const d = resolveSettings({}, {});
    expect([d.headersTimeoutMs, d.requestTimeoutMs, d.bodyTimeoutMs]).toEqual([
      10_000, 60_000, 30_000,
    ]);
    expect([d.maxConnections, d.dedupWindowMs]).toEqual([1024, 86_400_000]);
    const s = resolveSettings(
      {},
      {
        SVC_HEADERS_TIMEOUT: "2",
        SVC_REQUEST_TIMEOUT: "0.5",
        SVC_BODY_TIMEOUT: "1.5",
        SVC_MAX_CONNECTIONS: "5",
        SVC_DEDUP_WINDOW: "60",
      },
    );
    expect([s.headersTimeoutMs, s.requestTimeoutMs, s.bodyTimeoutMs]).toEqual([2000, 500, 1500]);
    expect([s.maxConnections, s.dedupWindowMs]).toEqual([5, 60_000]);
    expect(() => resolveSettings({}, { SVC_BODY_TIMEOUT: "soon" })).toThrow(/SVC_BODY_TIMEOUT/);
    expect(() => resolveSettings({}, { SVC_MAX_CONNECTIONS: "-1" })).toThrow(/SVC_MAX_CONNECTIONS/);
  });

  it("give Node a request timeout no shorter than the headers timeout, checked often enough", () => {
    const s = resolveSettings({}, { SVC_HEADERS_TIMEOUT: "2", SVC_REQUEST_TIMEOUT: "0.5" });
    const o = serverOptions(s);
    expect(o.headersTimeout).toBe(2000);
    // Node refuses headersTimeout > requestTimeout.
    expect(o.requestTimeout).toBe(2000);
    expect(o.connectionsCheckingInterval).toBeLessThanOrEqual(1000);
  });
});
