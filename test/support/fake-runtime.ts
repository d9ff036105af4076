import type {
  BuildFiles,
  HandlerEvent,
  JournalStep,
  Outcome,
  SdkRequestKind,
  SessionEnd,
} from "../../src/model/records.ts";
import type {
  Runtime,
  SessionHost,
  SessionSpec,
  StepReply,
  StepRequest,
} from "../../src/runtime/runtime.ts";

/**
 * What a fake handler can do, as `workflow_sdk` offers it to Python: every call goes through
 * the host the way the Python runtime sends it (numbered like Python numbers its steps).
 */
export interface FakeWorkflow {
  print(text: string, stream?: "stdout" | "stderr"): void;
  /** Fire and forget, like `http_outcome`. */
  outcome(outcome: Outcome): void;
  subscribe(name: string, filter: string): Promise<string>;
  nextEvent(ids: string[], timeoutMs: number | null): Promise<HandlerEvent | null>;
  unsubscribe(id: string): Promise<void>;
  sleep(ms: number): Promise<void>;
  /**
   * Runs `fn` as an activity: in a durable session its result (JSON) is journaled, and a replay
   * returns the recorded result without running it.
   */
  activity<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Ends the session as if its process died. */
  crash(message: string): never;
  /** A request of the SDK's AutoKitteh surface (`start_session`, `store`, …), as Python sends it. */
  sdk(kind: SdkRequestKind, fields: Record<string, unknown>): Promise<unknown>;
}

/** A handler written in TypeScript, standing in for Python in route and contract tests. */
export type FakeHandler = (spec: SessionSpec, wf: FakeWorkflow) => Promise<void> | void;

class Crash extends Error {}

/** A refused step, raised in the handler as Python raises it. */
function raise(reply: StepReply): unknown {
  if (reply.ok) return reply.value;
  throw Object.assign(new Error(reply.message), { name: reply.error });
}

/** Never settles: what a call of a process that is gone waits for. */
const gone = <T>() => new Promise<T>(() => {});

function workflow(
  spec: SessionSpec,
  host: SessionHost,
  fail: (e: unknown) => void,
  alive: () => boolean,
): FakeWorkflow {
  let seq = 0;
  let started = 0;
  const durable = spec.durable;
  const replaying = () => seq < spec.journal.length;
  // Like the Python runtime: steps carry the child's number only in durable sessions.
  const next = () => {
    const at = seq++;
    return durable ? { seq: at } : {};
  };
  // Once the run has ended its handler is as good as a killed process: nothing more goes out.
  const step = async (req: StepRequest): Promise<StepReply> => {
    if (!alive()) return gone();
    try {
      const reply = await host.step(req);
      return alive() ? reply : gone();
    } catch (e) {
      fail(e);
      return gone();
    }
  };
  return {
    print(text, stream = "stdout") {
      if (!replaying() && alive()) host.print(text, stream);
    },
    outcome(outcome) {
      void step({ kind: "outcome", outcome, ...next() }).catch(() => {});
    },
    async subscribe(name, filter) {
      return raise(await step({ kind: "subscribe", name, filter, ...next() })) as string;
    },
    async nextEvent(ids, timeoutMs) {
      const reply = await step({ kind: "next_event", ids, timeoutMs, ...next() });
      return raise(reply) as HandlerEvent | null;
    },
    async unsubscribe(id) {
      raise(await step({ kind: "unsubscribe", id, ...next() }));
    },
    async sleep(ms) {
      raise(await step({ kind: "sleep", ms, ...next() }));
    },
    async activity(name, fn) {
      const at = seq++;
      // A replayed activity is asked of the host, which answers from the journal (or refuses
      // a step that contradicts it).
      const replayed = durable && at < spec.journal.length;
      const recorded = replayed
        ? (raise(await step({ kind: "activity", seq: at, function: name })) as JournalStep)
        : null;
      if (recorded?.kind === "activity") {
        if (recorded.error) throw new Error(Buffer.from(recorded.error, "base64").toString());
        return JSON.parse(Buffer.from(recorded.result ?? "", "base64").toString());
      }
      if (!alive()) return gone();
      // Told as it starts, numbered as the Python runner numbers them; its report carries it.
      const id = ++started;
      host.activityStarted?.({ id, function: name });
      const t0 = performance.now();
      let value: Awaited<ReturnType<typeof fn>>;
      try {
        value = await fn();
      } catch (e) {
        const error = e instanceof Error ? e.message : String(e);
        host.activity({
          id,
          function: name,
          duration_ms: performance.now() - t0,
          ok: false,
          error,
        });
        if (durable) {
          const pickled = Buffer.from(error).toString("base64");
          await step({ kind: "activity", seq: at, function: name, error: pickled });
        }
        throw e;
      }
      host.activity({ id, function: name, duration_ms: performance.now() - t0, ok: true });
      if (durable) {
        const result = Buffer.from(JSON.stringify(value ?? null)).toString("base64");
        await step({ kind: "activity", seq: at, function: name, result });
      }
      return value;
    },
    crash(message) {
      throw new Crash(message);
    },
    async sdk(kind, fields) {
      return raise(await step({ kind, fields, ...next() }));
    },
  };
}

/**
 * An in-process Runtime: `entry` names a handler in `handlers`. A throw ends the session in
 * `error`, `wf.crash` in `crashed`, a step the host refuses to serve in `error` with its
 * message; `stop()` ends it as `stopped`. No Python involved.
 */
export function fakeRuntime(handlers: Record<string, FakeHandler> = {}) {
  const started: SessionSpec[] = [];
  const checks: { build: BuildFiles; calls: string[] }[] = [];
  const live = new Set<() => void>();
  let disposed = false;
  const runtime: Runtime = {
    async check(build, calls) {
      checks.push({ build, calls });
    },
    run(spec, _build, host) {
      started.push(spec);
      let over = false;
      let settle: (end: SessionEnd) => void = () => {};
      const ended = new Promise<SessionEnd>((r) => (settle = r));
      const end = (e: SessionEnd) => {
        over = true;
        settle(e);
      };
      const stop = () => end({ state: "stopped" });
      live.add(stop);
      const handler = disposed ? undefined : handlers[spec.entry];
      const fatal = (e: unknown) => end({ state: "error", message: (e as Error).message });
      void (async () => {
        if (disposed) return end({ state: "stopped" }); // as the Python runtime's, shut down
        if (!handler) return end({ state: "error", message: `no fake handler "${spec.entry}"` });
        try {
          await host.started();
          if (over) return;
          await handler(
            spec,
            workflow(spec, host, fatal, () => !over),
          );
          end({ state: "completed" });
        } catch (err) {
          if (err instanceof Crash) end({ state: "crashed", message: err.message });
          else end({ state: "error", message: (err as Error).message });
        }
      })();
      const done = ended.finally(() => live.delete(stop));
      return {
        done,
        async stop() {
          stop();
          await done;
        },
      };
    },
    async dispose() {
      disposed = true;
      for (const stop of [...live]) stop();
    },
  };
  return { runtime, started, checks };
}
