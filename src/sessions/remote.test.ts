import { describe, expect, it } from "vitest";
import { fakeFleet } from "../../test/support/owners.ts";
import { sessionRecord } from "../../test/support/records.ts";
import { sessionsFixture } from "../../test/support/sessions.ts";
import type { HandlerEvent } from "../model/records.ts";
import { INLINE_EVENT_BYTES } from "./event-wire.ts";

/** A fleet of one whose bus is in process: what another instance would send, the test sends. */
function sharedCluster() {
  const fleet = fakeFleet();
  const sent: Array<[string, unknown]> = [];
  for (const channel of ["events", "stop", "ended"]) {
    fleet.bus.receive(channel, (m) => sent.push([channel, m]));
  }
  return { ...fleet, sent };
}

const event = { event_id: "evt_x", session_id: "", event_type: "post", data: {} } as HandlerEvent;

describe("ClusterLink (through the facade)", () => {
  it("hands webhook events to every instance, and takes those of the others", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture({}, { cluster: c.cluster });
    const mine = f.manager.subscriptions.add("ses_1", "prj_1:source", null);
    const published = await f.publish("evt_x", event.data);
    expect(published).toMatchObject({ event_id: "evt_x", event_type: "post" });
    expect(c.sent).toContainEqual([
      "events",
      { id: "evt_x", origin: "me", source: "prj_1:source", event: published },
    ]);
    void c.bus.send("events", {
      id: "evt_y",
      origin: "other",
      source: "prj_1:source",
      event: { ...event, event_id: "evt_y" },
    });
    const got = [
      await f.manager.subscriptions.next("ses_1", [mine], 0),
      await f.manager.subscriptions.next("ses_1", [mine], 0),
      await f.manager.subscriptions.next("ses_1", [mine], 0),
    ];
    // Its own event, echoed back by the bus, is not delivered twice.
    expect(got.map((e) => e?.event_id ?? null)).toEqual(["evt_x", "evt_y", null]);
  });

  it("sends a large event by id; the others read it from storage, in order", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture({}, { cluster: c.cluster });
    const mine = f.manager.subscriptions.add("ses_1", "prj_1:source", null);
    const big = { body: "x".repeat(INLINE_EVENT_BYTES + 1) } as unknown as HandlerEvent["data"];
    await f.publish("evt_big", big);
    expect(c.sent).toContainEqual([
      "events",
      { id: "evt_big", origin: "me", source: "prj_1:source" },
    ]);
    await f.stores.events.put({
      id: "evt_far",
      project_id: "prj_1",
      trigger_id: "trg_1",
      trigger_name: "source",
      webhook_id: "w",
      event_type: "post",
      data: big,
      session_id: null,
      created_at: new Date().toISOString(),
    } as never);
    const from = { origin: "other", source: "prj_1:source" };
    void c.bus.send("events", { id: "evt_far", ...from });
    void c.bus.send("events", {
      id: "evt_small",
      ...from,
      event: { ...event, event_id: "evt_small" },
    });
    const ids: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await f.manager.subscriptions.next("ses_1", [mine], 1000))?.event_id ?? null);
    }
    expect(ids).toEqual(["evt_big", "evt_far", "evt_small"]);
  });

  it("owns a session started here from its first write, and tells the others once its end is written", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture({ on_post: () => {} }, { cluster: c.cluster });
    const record = await f.start("on_post");
    await f.manager.whenEnded(record.id); // resolves once the end is written
    await new Promise((r) => setImmediate(r));
    expect(c.steps).toEqual([`own ${record.id}`]);
    // Its end's write removed the owner row: nothing more to let go.
    expect(c.held.has(record.id)).toBe(false);
    expect(c.sent).toContainEqual(["ended", { id: record.id, session_id: record.id }]);
  });

  it("asks another instance to stop its session and waits for the news of its end", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture({}, { cluster: c.cluster });
    const elsewhere = sessionRecord({ id: "ses_far", state: "running" });
    await f.stores.sessions.put(elsewhere);
    const ended = f.manager.whenEnded("ses_far");
    const stopping = f.manager.stop("ses_far");
    while (!c.sent.some(([ch]) => ch === "stop")) await new Promise((r) => setImmediate(r));
    expect(c.sent).toContainEqual(["stop", expect.objectContaining({ session_id: "ses_far" })]);
    await f.stores.sessions.put({ ...elsewhere, state: "stopped" });
    void c.bus.send("ended", { id: "ses_far", session_id: "ses_far" });
    expect((await stopping).state).toBe("stopped");
    expect((await ended)?.state).toBe("stopped");
    await expect(f.manager.stop("ses_nope")).rejects.toThrow('session "ses_nope" not found');
  });

  it("stops a session still on the shared queue itself, having taken it off the queue", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture({}, { cluster: c.cluster });
    await f.stores.sessions.put(sessionRecord({ id: "ses_queued", state: "created" }));
    c.queue.push("ses_queued");
    expect((await f.manager.stop("ses_queued")).state).toBe("stopped");
    expect((await f.stores.sessions.get("ses_queued"))?.state).toBe("stopped");
    expect(c.steps).toEqual(["take ses_queued"]);
    expect(c.held.has("ses_queued") || c.queue.includes("ses_queued")).toBe(false);
    expect(c.sent).toContainEqual(["ended", { id: "ses_queued", session_id: "ses_queued" }]);
    expect(c.sent.some(([ch]) => ch === "stop")).toBe(false);
  });

  it("a queued session whose stop storage refused goes back on the queue, not lost", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture({}, { cluster: c.cluster });
    await f.stores.sessions.put(sessionRecord({ id: "ses_queued", state: "created" }));
    c.queue.push("ses_queued");
    f.stores.sessions.commit = async () => {
      throw new Error("storage unavailable");
    };
    await expect(f.manager.stop("ses_queued")).rejects.toThrow();
    expect(c.steps).toEqual(["take ses_queued", "requeue ses_queued"]);
    expect(c.queue).toEqual(["ses_queued"]);
  });

  it("stops a session running here when another instance asks", async () => {
    const c = sharedCluster();
    const f = await sessionsFixture(
      { on_hang: () => new Promise(() => {}) },
      { cluster: c.cluster },
    );
    const record = await f.start("on_hang");
    const ended = f.manager.whenEnded(record.id);
    void c.bus.send("stop", { id: "stop-1", session_id: record.id });
    expect((await ended)?.state).toBe("stopped");
  });
});
