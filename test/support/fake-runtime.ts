import type { BuildFiles, SessionEnd } from "../../src/model/records.ts";
import type { Runtime, SessionHost, SessionSpec } from "../../src/runtime/runtime.ts";

/** A handler written in TypeScript, standing in for Python in route tests. */
export type FakeHandler = (spec: SessionSpec, host: SessionHost) => Promise<void> | void;

/**
 * An in-process Runtime: `entry` names a handler in `handlers`. A throw ends the session in
 * `error`; `stop()` ends it as `stopped`. For route tests only: no Python involved.
 */
export function fakeRuntime(handlers: Record<string, FakeHandler> = {}) {
  const started: SessionSpec[] = [];
  const checks: { build: BuildFiles; calls: string[] }[] = [];
  const runtime: Runtime = {
    async check(build, calls) {
      checks.push({ build, calls });
    },
    run(spec, _build, host) {
      started.push(spec);
      let stop: (end: SessionEnd) => void = () => {};
      const stopped = new Promise<SessionEnd>((r) => (stop = r));
      const handler = handlers[spec.entry];
      const ran = (async (): Promise<SessionEnd> => {
        if (!handler) return { state: "error", message: `no fake handler "${spec.entry}"` };
        try {
          host.started();
          await handler(spec, host);
          return { state: "completed" };
        } catch (err) {
          return { state: "error", message: (err as Error).message };
        }
      })();
      return {
        done: Promise.race([ran, stopped]),
        async stop() {
          stop({ state: "stopped" });
        },
      };
    },
    async dispose() {},
  };
  return { runtime, started, checks };
}
