import type { Tracing } from "./tracing-api.ts";

export type { Tracing } from "./tracing-api.ts";

/** Whether the environment asks for traces: an OTLP endpoint, and no switch turning them off. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * The tracer the `OTEL_*` variables describe, or null when they ask for none. OpenTelemetry's
 * modules are imported here, on demand: a service without the variables never loads them.
 * @example const tracing = await loadTracing(process.env, log); composeApp({ …, observe: { tracing } });
 */
export async function loadTracing(
  env: NodeJS.ProcessEnv,
  warn: (msg: string) => void = () => {},
): Promise<Tracing | null> {
  if (!tracingWanted(env)) return null;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter && exporter !== "otlp") {
    warn(`OTEL_TRACES_EXPORTER=${exporter}: only otlp is supported; sending OTLP`);
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)
    ?.trim()
    .toLowerCase();
  if (protocol && protocol !== "http/json") {
    warn(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: only http/json is supported; sending http/json`);
  }
  const { createOtelTracing } = await import("./otel.ts");
  return createOtelTracing(env);
}

/** `00-<trace id>-<span id>-<flags>`, W3C Trace Context level 1. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The trace id of a `traceparent`, or null when it is not one.
 * @example traceIdOf("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") // "4bf9…4736"
 */
export function traceIdOf(traceparent: string | undefined | null): string | null {
  const m = TRACEPARENT.exec(traceparent?.trim() ?? "");
  return m && !/^0+$/.test(m[1]!) ? m[1]! : null;
}
