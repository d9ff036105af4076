import type { Runtime, SessionHost, SessionSpec } from "../runtime/runtime.ts";
import type { Metrics } from "./metrics.ts";
import type { Tracing } from "./tracing.ts";

/** The variable that carries the session's trace context into Python (W3C Trace Context). */
export const TRACEPARENT_VAR = "TRACEPARENT";

/**
 * The same runtime, whose sessions' activities and steps are measured, and, with tracing on,
 * traced under the session's span; the session's Python environment then carries
 * `TRACEPARENT` (the session span), which `workflow_sdk.trace_headers()` hands to outgoing calls.
 * @example const runtime = observeRuntime(python, metrics, tracing, (id) => directory.get(id));
 */
export function observeRuntime(
  runtime: Runtime,
  metrics: Metrics,
  tracing: Tracing | null,
  sessionOf: (sessionId: string) => { project: string; trigger: string } | undefined,
): Runtime {
  const run: Runtime["run"] = (spec, build, host) => {
    const id = spec.sessionId;
    const known = sessionOf(id);
    const project = known?.project ?? spec.projectId;
    const traceparent = tracing?.traceparent(id);
    const withTrace: SessionSpec = traceparent
      ? { ...spec, env: { ...spec.env, [TRACEPARENT_VAR]: traceparent } }
      : spec;
    const observed: SessionHost = {
      started: () => host.started(),
      print: (text, stream, outside) => host.print(text, stream, outside),
      activityStarted: (start) => host.activityStarted?.(start),
      activity(report) {
        metrics.activity(project, report.function, report.ok, report.duration_ms);
        // An attempt that another follows is a retry.
        if (report.retry?.next_in_ms !== undefined) metrics.retried(project, known?.trigger ?? "");
        tracing?.activity(id, report);
        host.activity(report);
      },
      async step(req) {
        const t0 = performance.now();
        let ok = false;
        try {
          const reply = tracing
            ? await tracing.step(id, req, () => host.step(req))
            : await host.step(req);
          ok = reply.ok;
          return reply;
        } finally {
          metrics.step(project, req.kind, ok, performance.now() - t0);
        }
      },
    };
    return runtime.run(withTrace, build, observed);
  };
  return new Proxy(runtime, {
    get(target, prop, receiver) {
      if (prop === "run") return run;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
