import { describe, expect, it } from "vitest";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { sessionsFixture } from "../../test/support/sessions.ts";

/** A front door's counters whose business the test sets. */
function frontCounters(busy: boolean) {
  return { setHere() {}, arriving: 0, busy, crowded: () => false };
}

describe("sessions the front door hands over (fake runtime)", () => {
  it("one waiting out the front's burst begins after it with its event read from the text handed over", async () => {
    const got: unknown[] = [];
    const handlers = { on_post: (spec: { event: { data: unknown } }) => void got.push(spec.event) };
    const counters = frontCounters(true);
    const f = await sessionsFixture(handlers, { front: { counters, burstYieldMs: 60_000 } });
    const record = await f.handOver("on_post", "from the text");
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual([]); // waits while the front is busy
    counters.busy = false;
    expect(await f.manager.whenEnded(record.id)).toMatchObject({ state: "completed" });
    const stored = await f.stores.events.get(record.event_id);
    expect(got).toEqual([
      { event_id: stored!.id, session_id: record.id, event_type: "post", data: stored!.data },
    ]);
    expect(JSON.stringify(got)).toContain("from the text");
    await f.manager.dispose();
  });
});

describe("sessions the front door hands over, when the service stops (fake runtime)", () => {
  it("one waiting out the front's burst at shutdown is left created, and runs at the next start", async () => {
    let runs = 0;
    const handlers = {
      on_post: () => {
        runs++;
      },
    };
    const counters = frontCounters(true);
    const f = await sessionsFixture(handlers, { front: { counters, burstYieldMs: 60_000 } });
    const record = await f.handOver("on_post");
    expect(f.manager.live(record.id)?.record.state).toBe("created"); // tracked while it waits
    f.manager.shutdown(); // as the service stops: the sessions, then the runtime
    await f.fake.runtime.dispose();
    await f.manager.dispose();
    expect(f.manager.live(record.id)).toBeNull();
    expect(f.fake.started).toHaveLength(0); // no run was built for it
    const left = await f.stores.sessions.get(record.id);
    expect(left).toMatchObject({ state: "created", ended_at: null });
    const log = await f.stores.logs.get(record.id);
    expect(log.map((e) => (e.kind === "warning" ? e.text : e.kind))).toContain(
      "service stopping before it started",
    );

    counters.busy = false; // the next start, on the same storage, its front idle
    const next = f.make(fakeRuntime({ "handlers.py:on_post": handlers.on_post }).runtime);
    expect(await next.recover()).toMatchObject({ started: 1 });
    expect(await next.whenEnded(record.id)).toMatchObject({ state: "completed" });
    expect(runs).toBe(1);
    await next.dispose();
  });
});
