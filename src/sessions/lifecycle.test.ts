import { describe, expect, it } from "vitest";
import { sessionsFixture } from "../../test/support/sessions.ts";
import type { HandlerEvent, SessionRecord, WebhookData } from "../model/records.ts";
import { storedJson } from "../storage/stored-json.ts";
import { MAX_RESUMES } from "./after-attempt.ts";

const tick = () => new Promise((r) => setImmediate(r));

/** `p`, noting `name` in `told` when it resolves. */
function noting<T>(told: string[], name: string, p: Promise<T>): Promise<T> {
  return p.then((r) => {
    told.push(name);
    return r;
  });
}

/** The session's end, once stored (whenEnded resolves then), with its stored record and log. */
async function ended(f: Awaited<ReturnType<typeof sessionsFixture>>, id: string) {
  const record = await f.manager.whenEnded(id);
  return { record, stored: await f.stores.sessions.get(id), log: await f.stores.logs.get(id) };
}

describe("session lifecycle (fake runtime, memory storage)", () => {
  it("runs a session created → running → completed and writes its record and log", async () => {
    const f = await sessionsFixture({
      on_post: (spec, wf) => wf.print(`hi ${(spec.event.data as WebhookData).body.text}`),
    });
    const record = await f.start("on_post", "there");
    expect(record.state).toBe("created");
    expect(f.manager.activeCount).toBe(1);
    const { stored, log } = await ended(f, record.id);
    expect(stored).toMatchObject({
      state: "completed",
      started_at: expect.any(String),
      error: null,
    });
    expect(
      log.map((e) => (e.kind === "print" ? e.text : e.kind === "state" ? e.state : e.kind)),
    ).toEqual(["running", "hi there", "completed"]);
    expect(f.manager.activeCount).toBe(0);
    expect(f.manager.live(record.id)).toBeNull();
  });

  it("a session handed over twice (recovery and the front door at a start) runs once", async () => {
    let runs = 0;
    const f = await sessionsFixture({
      on_post: () => {
        runs++;
      },
    });
    const record = await f.start("on_post");
    const event = await f.stores.events.get(record.event_id);
    f.manager.front.adopt(record, storedJson(event!)); // the same session again, while it runs
    await ended(f, record.id);
    await tick();
    expect(runs).toBe(1);
  });

  it("a failing handler ends in error with its message", async () => {
    const f = await sessionsFixture({
      on_fail: () => {
        throw new Error("KeyError: 'x'");
      },
    });
    const { stored } = await ended(f, (await f.start("on_fail")).id);
    expect(stored).toMatchObject({ state: "error", error: { message: "KeyError: 'x'" } });
  });

  it("holds a sync request until the first final outcome, or times it out on the clock", async () => {
    let release = () => {};
    const f = await sessionsFixture({
      sync_ok: async (_s, wf) => {
        wf.outcome({ status_code: 201, headers: {}, body: null, more: false });
        await new Promise<void>((r) => {
          release = r;
        });
      },
      sync_silent: () => new Promise(() => {}),
    });
    // Held as the webhook route holds a request: through the wait `ingest` hands back.
    const ok = await f.startHeld("sync_ok");
    expect(await ok.outcome(30_000)).toMatchObject({
      kind: "outcome",
      outcome: { status_code: 201 },
    });
    release();
    const silent = await f.startHeld("sync_silent");
    const waiting = silent.outcome(30_000);
    await f.clock.advance(30_000);
    expect(await waiting).toEqual({ kind: "timeout" });
    await f.manager.stop(silent.session.id);
  });

  it("stop() ends a running session as stopped and drops its subscriptions", async () => {
    const f = await sessionsFixture({
      on_wait: async (_s, wf) => {
        const id = await wf.subscribe("source", "");
        await wf.nextEvent([id], null);
      },
    });
    const record = await f.start("on_wait");
    while (!f.manager.live(record.id)?.log.entries.some((e) => e.kind === "subscribe"))
      await tick();
    const sub = f.manager.live(record.id)!.log.entries.find((e) => e.kind === "subscribe")!;
    const stopped = await f.manager.stop(record.id);
    expect(stopped.state).toBe("stopped");
    expect(
      f.manager.subscriptions.has((sub as { subscription_id: string }).subscription_id, record.id),
    ).toBe(false);
    // stop() resolved once the stopped record was stored: a second stop reads it from there.
    expect((await f.manager.stop(record.id)).state).toBe("stopped");
  });

  it("whenEnded() and stop() resolve once the session's end is stored", async () => {
    // Held requests' sessions (sync): they run without waiting for their `running` write.
    const f = await sessionsFixture({
      sync_post: () => {},
      sync_hang: () => new Promise(() => {}),
    });
    // Both accepted first (an accept waits for its first commit); each runs after its accept.
    const hang = await f.start("sync_hang");
    const done = await f.start("sync_post");
    const release = f.holdWrites();
    const told: string[] = [];
    const here = noting(told, "here", f.manager.whenEnded(done.id));
    // Asked once the end is told here, before it is stored: storage is read after its write.
    let justEnded: Promise<SessionRecord | null> | null = null;
    f.manager.onEnd(done.id, () => {
      justEnded = noting(told, "after", f.manager.whenEnded(done.id));
    });
    while (!f.manager.live(hang.id)?.record.started_at) await tick();
    const stopped = noting(told, "stop", f.manager.stop(hang.id));
    while (justEnded === null || f.manager.activeCount > 0) await tick();
    for (let i = 0; i < 10; i++) await tick();
    expect(told).toEqual([]); // ended, not yet stored
    release();
    expect(await here).toMatchObject({ state: "completed" });
    expect(await justEnded).toMatchObject({ state: "completed" });
    expect(await stopped).toMatchObject({ state: "stopped" });
    expect((await f.stores.sessions.get(hang.id))?.state).toBe("stopped");
  });

  it("resumes a durable session whose process died, replaying its journal", async () => {
    const ran: string[] = [];
    let runs = 0;
    const f = await sessionsFixture({
      durable_steps: async (_s, wf) => {
        runs++;
        const a = await wf.activity("m.one", () => {
          ran.push("one");
          return 1;
        });
        if (runs === 1) wf.crash("killed");
        const b = await wf.activity("m.two", () => {
          ran.push("two");
          return 2;
        });
        wf.print(`sum ${a + b}`);
      },
    });
    const record = await f.start("durable_steps");
    const { stored, log } = await ended(f, record.id);
    expect(stored).toMatchObject({ state: "completed", attempts: 1, replayed_steps: 1 });
    expect(ran).toEqual(["one", "two"]);
    expect(
      log.some((e) => e.kind === "warning" && e.text.includes("resuming from the journal")),
    ).toBe(true);
    expect(
      (await f.stores.journals.list(record.id)).map((s) => s.kind === "activity" && s.function),
    ).toEqual(["m.one", "m.two"]);
    expect(f.fake.started.map((s) => s.journal.length)).toEqual([0, 1]);
  });

  it(`fails a durable session that keeps dying after ${MAX_RESUMES} resumes`, async () => {
    const f = await sessionsFixture({ durable_dies: (_s, wf) => wf.crash("killed") });
    const { stored } = await ended(f, (await f.start("durable_dies")).id);
    expect(stored).toMatchObject({
      state: "error",
      attempts: MAX_RESUMES,
      error: { message: "interrupted: killed" },
    });
  });

  it("parks a durable session waiting past evictAfterMs, and resumes it by replay when its event comes", async () => {
    const seen: string[] = [];
    const f = await sessionsFixture(
      {
        durable_wait: async (_s, wf) => {
          const id = await wf.subscribe("source", "");
          const event = await wf.nextEvent([id], null);
          wf.print(`got ${(event?.data as WebhookData | undefined)?.body.text}`);
          seen.push(event?.event_id ?? "none");
        },
      },
      { evictAfterMs: 2000 },
    );
    const record = await f.start("durable_wait");
    while (!f.manager.live(record.id)?.log.entries.some((e) => e.kind === "subscribe"))
      await tick();
    await f.clock.advance(2000);
    const log = f.manager.live(record.id)!.log;
    expect(
      log.entries.some((e) => e.kind === "warning" && e.text.includes("process released")),
    ).toBe(true);
    expect(f.manager.activeCount).toBe(1); // still here, without a process
    expect(f.manager.parkedCount).toBe(1); // what /metrics shows as hookline_sessions_parked
    await f.publish("evt_x", { body: { text: "late" } } as unknown as HandlerEvent["data"]);
    const { stored, log: entries } = await ended(f, record.id);
    expect(stored?.state).toBe("completed");
    expect(f.manager.parkedCount).toBe(0);
    expect(seen).toEqual(["evt_x"]); // the handler went past the wait once: in the replay
    expect(
      entries.filter((e) => e.kind === "print").map((e) => (e as { text: string }).text),
    ).toEqual(["got late"]);
    expect(f.fake.started.map((s) => s.journal.map((j) => j.kind))).toEqual([
      [],
      ["subscribe", "next_event"],
    ]);
  });

  it("keeps a durable timer's deadline in the record and fires it on the clock", async () => {
    const f = await sessionsFixture({
      // A step first, so that the record's `running` write is made before the timer is set.
      durable_sleep: async (_s, wf) => {
        await wf.activity("m.first", () => 1);
        await wf.sleep(5000);
      },
    });
    const record = await f.start("durable_sleep");
    while (!f.manager.live(record.id)?.record.timer) await tick();
    const until = f.manager.live(record.id)!.record.timer!.until;
    expect(until).toBe(f.clock.now() + 5000);
    // The record is written behind; memory storage takes no I/O, so a turn of the event loop
    // sees that write done.
    await tick();
    expect((await f.stores.sessions.get(record.id))?.timer?.until).toBe(until);
    await f.clock.advance(4999);
    expect(f.manager.live(record.id)).not.toBeNull();
    await f.clock.advance(1);
    expect((await ended(f, record.id)).stored?.state).toBe("completed");
  });

  it("refuses to start past maxActive, and after shutdown", async () => {
    const f = await sessionsFixture({ on_hang: () => new Promise(() => {}) }, { maxActive: 1 });
    // Through the one way in (ingest): a refused start is the `unavailable` error.
    const refused = { name: "HooklineError", code: "unavailable" };
    const a = await f.start("on_hang");
    await expect(f.start("on_hang")).rejects.toMatchObject(refused);
    await f.manager.stop(a.id);
    const b = await f.start("on_hang");
    await f.manager.stop(b.id);
    f.manager.shutdown();
    await expect(f.start("on_hang")).rejects.toMatchObject(refused);
    expect(f.manager.activeCount).toBe(0);
    await f.manager.dispose();
    await f.manager.dispose();
  });

  it("drain() resolves once the non-durable sessions here have ended, not waiting for durable ones", async () => {
    let release: (() => void) | null = null;
    const f = await sessionsFixture({
      on_work: () =>
        new Promise<void>((r) => {
          release = r;
        }),
      durable_wait: () => new Promise(() => {}),
    });
    const durable = await f.start("durable_wait");
    const plain = await f.start("on_work");
    while (!release) await tick();
    let drained = false;
    const draining = f.manager.drain().then(() => {
      drained = true;
    });
    for (let i = 0; i < 5; i++) await tick();
    expect(drained, "a non-durable session still runs").toBe(false);
    (release as () => void)();
    await draining;
    expect((await ended(f, plain.id)).stored).toMatchObject({ state: "completed" });
    expect(f.manager.live(durable.id), "the durable one runs on").not.toBeNull();
    await f.manager.stop(durable.id);
  });

  it("runs a session nobody waits for only once its running state is stored; a held one at once", async () => {
    const ran: string[] = [];
    const f = await sessionsFixture({
      on_post: () => void ran.push("async"),
      sync_q: (_s, wf) => {
        ran.push("sync");
        wf.outcome({ status_code: 200, headers: {}, body: null, more: false });
      },
    });
    const release = f.holdWrites();
    const created = f.start("on_post");
    const held = f.startHeld("sync_q");
    for (let i = 0; i < 20; i++) await tick();
    // Its record is not even stored yet: nothing ran.
    expect(ran).toEqual([]);
    release();
    const record = await created;
    await held;
    const release2 = f.holdWrites();
    for (let i = 0; i < 20; i++) await tick();
    // The held request's session does not wait for its `running` write; the other one does,
    // so a crash can never leave a session stored `created` that had begun (it would run twice).
    expect(ran).toEqual(["sync"]);
    expect((await f.stores.sessions.get(record.id))?.state).toBe("created");
    release2();
    expect((await ended(f, record.id)).stored?.state).toBe("completed");
    expect(ran).toEqual(["sync", "async"]);
  });

  it("resumes a durable session whose process died waiting: an event sent before the new run waits reaches it", async () => {
    let runs = 0;
    let open = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const got: (string | null)[] = [];
    const f = await sessionsFixture({
      durable_wait: async (_s, wf) => {
        runs++;
        const sub = await wf.subscribe("source", "");
        if (runs === 1) {
          void wf.nextEvent([sub], null).catch(() => {}); // waiting when its process dies
          await tick();
          wf.crash("killed");
        }
        await gate; // the new run is slow to wait again
        got.push((await wf.nextEvent([sub], null))?.event_id ?? null);
      },
    });
    const record = await f.start("durable_wait");
    while (runs < 2) await tick();
    await f.publish("evt_meanwhile", { body: { text: "x" } } as unknown as HandlerEvent["data"]);
    for (let i = 0; i < 20; i++) await tick();
    const journal = await f.stores.journals.list(record.id);
    expect(
      journal.map((step) => step.kind),
      "the dead run's wait must not take the event (nor record it)",
    ).toEqual(["subscribe"]);
    open();
    expect((await ended(f, record.id)).stored?.state).toBe("completed");
    expect(got).toEqual(["evt_meanwhile"]);
  });
});
