import { describe, expect, it } from "vitest";
import { resolveSettings } from "../config.ts";
import { consoleLogger } from "../log.ts";
import { jsonLogger, serviceLogger } from "./log-json.ts";
import { requestRoute } from "./route.ts";
import { traceIdOf, tracingWanted } from "./tracing.ts";

const SES = "ses_01jdx0000000000000000000aa";
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

describe("JSON logs", () => {
  it("writes one object a line with time, level, message, and the named session's facts", () => {
    const lines: string[] = [];
    const log = jsonLogger(
      (l) => lines.push(l),
      () => ({
        session: (id) =>
          id === SES
            ? {
                session_id: SES,
                project: "p",
                trigger: "t",
                trace_id: TRACE,
                span_id: "00f067aa0ba902b7",
              }
            : undefined,
        current: () => ({ trace_id: "f".repeat(32), span_id: "e".repeat(16) }),
      }),
    );
    log.warn(`session ${SES} ended in error`);
    log.info("listening");
    log.error("boom", new Error("bad"));
    expect(lines.every((l) => l.endsWith("\n") && !l.slice(0, -1).includes("\n"))).toBe(true);
    const [a, b, c] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(a!).slice(0, 3)).toEqual(["time", "level", "message"]);
    expect(a).toMatchObject({
      level: "warn",
      session_id: SES,
      project: "p",
      trigger: "t",
      trace_id: TRACE,
    });
    expect(b).toMatchObject({ level: "info", message: "listening", trace_id: "f".repeat(32) });
    expect(b).not.toHaveProperty("session_id");
    expect(c!.error).toMatch(/^Error: bad/);
  });

  it("keeps the human lines unless SVC_LOG_FORMAT=json", () => {
    const lines: string[] = [];
    serviceLogger(
      "text",
      (l) => lines.push(l),
      () => null,
      consoleLogger,
    ).info("hello");
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+ info hello\n$/);
    serviceLogger(
      "json",
      (l) => lines.push(l),
      () => null,
      consoleLogger,
    ).info("hello");
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: "info", message: "hello" });
  });

  it("reads SVC_LOG_FORMAT: text by default, json, anything else refused", () => {
    expect(resolveSettings({}, {}).logFormat).toBe("text");
    expect(resolveSettings({}, { SVC_LOG_FORMAT: "json" }).logFormat).toBe("json");
    expect(() => resolveSettings({}, { SVC_LOG_FORMAT: "xml" })).toThrow(
      'SVC_LOG_FORMAT: expected text or json, got "xml"',
    );
  });
});

describe("tracing switches and names", () => {
  it("turns on only with an OTLP endpoint and nothing that turns it off", () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_SERVICE_NAME: "x" })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toBe(
      true,
    );
    expect(
      tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_SDK_DISABLED: "true" }),
    ).toBe(false);
    expect(
      tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_TRACES_EXPORTER: "none" }),
    ).toBe(false);
  });

  it("reads trace ids and keeps secret paths out of route names", () => {
    expect(traceIdOf(`00-${TRACE}-00f067aa0ba902b7-01`)).toBe(TRACE);
    expect(traceIdOf(`00-${"0".repeat(32)}-00f067aa0ba902b7-01`)).toBeNull();
    expect(traceIdOf("nonsense")).toBeNull();
    expect(requestRoute("/webhooks/abcdefghijklmnopqrstuvwxyz/any/suffix")).toBe("/webhooks/:id");
    expect(requestRoute(`/api/v1/sessions/${SES}/log`)).toBe("/api/v1/sessions/:id/log");
    expect(requestRoute("/wp-admin.php")).toBeNull();
  });
});
