import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  ActivityReport,
  BuildFiles,
  HandlerEvent,
  JournalStep,
  Outcome,
} from "../../src/model/records.ts";
import type { ActivityStart } from "../../src/model/run-records.ts";
import type { Runtime, SessionHost, SessionSpec } from "../../src/runtime/runtime.ts";

/** A host that records what a run did; its steps go through the core's journal. */
export interface ContractHost extends SessionHost {
  prints: Array<{ text: string; stream: "stdout" | "stderr" }>;
  activities: ActivityReport[];
  activityStarts: ActivityStart[];
  outcomes: Outcome[];
  journaled: JournalStep[];
  calls: string[];
  starts: number;
  events: Array<HandlerEvent | null>;
}

export interface ContractSetup {
  /** The runtime under test, shared by the suite; disposed after it. */
  runtime: Runtime;
  /** A runtime of its own, for the dispose test. */
  fresh(): Runtime;
  /** A build holding the entries `runtimeContract` names. */
  build: BuildFiles;
  /** A recording host for one run of `spec` (its `durable` and `journal`). */
  host(spec: Pick<SessionSpec, "durable" | "journal">): ContractHost;
  /** A spec for `entry`, with an event whose body text is "hello". */
  spec(over: Partial<SessionSpec>): SessionSpec;
  /** An event whose body text is `text`. */
  event(text: string): HandlerEvent;
  teardown?(): Promise<void>;
}

/**
 * One suite every Runtime passes, whatever runs the workflow code. The build must hold, under
 * `handlers.py`:
 * - `on_post`: prints "hello <body text>" (stdout) and "to stderr" (stderr), returns;
 * - `on_fail`: raises an error whose message holds "missing";
 * - `on_sync`: outcome 201, header `X-N: 42`, body "n=42";
 * - `on_durable`: activity `double(21)`, subscribe("hook", ""), next_event(sid, timeout 5 s),
 *   prints "got <body text> 42", outcome 200 with body "done";
 * - `on_loop`: prints "looping", then never returns;
 * - `on_crash`: prints "crashing", then its process dies.
 * @example runtimeContract("python", async () => ({ runtime, fresh, build, host: recordingHost, spec: testSpec, event: testEvent }));
 */
export function runtimeContract(name: string, setup: () => Promise<ContractSetup>): void {
  describe(`Runtime contract: ${name}`, () => {
    let s: ContractSetup;
    beforeAll(async () => {
      s = await setup();
    }, 180_000);
    afterAll(async () => {
      await s?.runtime.dispose();
      await s?.teardown?.();
    });
    const run = (over: Partial<SessionSpec>, host?: ContractHost) => {
      const spec = s.spec(over);
      const h = host ?? s.host(spec);
      return { h, run: s.runtime.run(spec, s.build, h) };
    };
    const until = async (ok: () => boolean) => {
      while (!ok()) await new Promise((r) => setTimeout(r, 10));
    };

    it("runs a session to completed; its prints reach the host in order", async () => {
      const { h, run: r } = run({ entry: "handlers.py:on_post" });
      expect(await r.done).toEqual({ state: "completed" });
      expect(h.starts).toBe(1);
      expect(h.prints.filter((p) => !p.text.startsWith("imported"))).toEqual([
        { text: "hello hello", stream: "stdout" },
        { text: "to stderr", stream: "stderr" },
      ]);
    });

    it("begins the session's code only once the host's started() has resolved", async () => {
      const spec = s.spec({ entry: "handlers.py:on_post" });
      const h = s.host(spec);
      const opened: boolean[] = [];
      let open = () => {};
      const gate = new Promise<void>((r) => (open = r));
      const started = h.started.bind(h);
      h.started = () => {
        started();
        return gate;
      };
      const print = h.print.bind(h);
      h.print = (text, stream) => {
        opened.push(gateOpen);
        print(text, stream);
      };
      let gateOpen = false;
      const r = s.runtime.run(spec, s.build, h);
      await until(() => h.starts === 1);
      // Time for a runtime that does not wait to run the handler (a slow machine only makes
      // this check weaker, never wrong).
      await new Promise((resolve) => setTimeout(resolve, 300));
      gateOpen = true;
      open();
      expect(await r.done).toEqual({ state: "completed" });
      expect(opened.length).toBeGreaterThan(0);
      expect(opened, "prints made before started() resolved").not.toContain(false);
    });

    it("ends a failing handler in error with its message", async () => {
      const end = await run({ entry: "handlers.py:on_fail" }).run.done;
      expect(end).toMatchObject({ state: "error", message: expect.stringContaining("missing") });
    });

    it("hands the outcome to the host", async () => {
      const { h, run: r } = run({ entry: "handlers.py:on_sync" });
      expect(await r.done).toEqual({ state: "completed" });
      expect(h.outcomes).toEqual([
        { status_code: 201, headers: { "X-N": "42" }, body: Buffer.from("n=42"), more: false },
      ]);
      expect(h.journaled).toEqual([]); // not durable
    });

    it("journals a durable session's steps in order, and replays them on resume", async () => {
      const spec = s.spec({ entry: "handlers.py:on_durable", durable: true });
      const first = s.host(spec);
      first.events.push(s.event("second"));
      expect(await s.runtime.run(spec, s.build, first).done).toEqual({ state: "completed" });
      // A runtime may journal a digest of an activity's arguments (Python does: replay checks).
      const withoutArgs = first.journaled.map((step) => {
        const { args: _, ...rest } = step as JournalStep & { args?: string };
        return rest;
      });
      expect(withoutArgs).toEqual([
        {
          seq: 0,
          kind: "activity",
          function: expect.stringContaining("double"),
          result: expect.any(String),
        },
        { seq: 1, kind: "subscribe", name: "hook", filter: "", value: "sub_1" },
        { seq: 2, kind: "next_event", value: s.event("second") },
        { seq: 3, kind: "outcome" },
      ]);
      expect(first.prints.map((p) => p.text)).toContain("got second 42");
      // The live activity is numbered; a start told (Python tells those still running at 50 ms)
      // names it, and its report carries that number.
      const double = expect.stringContaining("double");
      expect(first.activities).toEqual([expect.objectContaining({ id: 1, function: double })]);
      for (const told of first.activityStarts) {
        expect(told).toMatchObject({ id: 1, function: double });
      }

      // Resumed after the event: nothing is run or asked again, the rest goes on live.
      const journal = first.journaled.slice(0, 3);
      const resumed = s.host({ durable: true, journal });
      const end = await s.runtime.run({ ...spec, journal }, s.build, resumed).done;
      expect(end).toEqual({ state: "completed" });
      expect(resumed.activities).toEqual([]);
      expect(resumed.activityStarts).toEqual([]); // replayed: not run, not started
      expect(resumed.calls).toEqual([]);
      expect(resumed.prints.map((p) => p.text)).toContain("got second 42");
      expect(resumed.journaled).toEqual([{ seq: 3, kind: "outcome" }]);
      expect(resumed.outcomes).toEqual([
        { status_code: 200, headers: expect.any(Object), body: Buffer.from("done"), more: false },
      ]);

      // Replayed whole: it completes without a step taken or an outcome sent again.
      const replayed = s.host({ durable: true, journal: first.journaled });
      const again = s.runtime.run({ ...spec, journal: first.journaled }, s.build, replayed);
      expect(await again.done).toEqual({ state: "completed" });
      expect(replayed.journaled).toEqual([]);
      expect(replayed.outcomes).toEqual([]);
    });

    it("stop() ends a running session as stopped; again is a no-op", async () => {
      const { h, run: r } = run({ entry: "handlers.py:on_loop", workflowTimeoutMs: 60_000 });
      await until(() => h.prints.some((p) => p.text === "looping"));
      await r.stop();
      expect(await r.done).toEqual({ state: "stopped" });
      await r.stop();
    });

    it("a process that dies gives crashed", async () => {
      const { h, run: r } = run({ entry: "handlers.py:on_crash" });
      expect(await r.done).toMatchObject({ state: "crashed" });
      expect(h.prints.map((p) => p.text)).toContain("crashing");
    });

    it("dispose() stops every session; a run after it ends at once", async () => {
      const own = s.fresh();
      const hosts = [0, 1].map(() => s.host({ durable: false, journal: [] }));
      const runs = hosts.map((h) =>
        own.run(s.spec({ entry: "handlers.py:on_loop", workflowTimeoutMs: 60_000 }), s.build, h),
      );
      for (const h of hosts) await until(() => h.prints.some((p) => p.text === "looping"));
      await own.dispose();
      for (const r of runs) expect(await r.done).toEqual({ state: "stopped" });
      await own.dispose(); // idempotent
      const late = own.run(
        s.spec({ entry: "handlers.py:on_post" }),
        s.build,
        s.host({ durable: false, journal: [] }),
      );
      expect((await late.done).state).not.toBe("completed");
    });
  });
}
