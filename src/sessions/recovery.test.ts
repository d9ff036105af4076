import { describe, expect, it } from "vitest";
import { sessionRecord } from "../../test/support/records.ts";
import { sessionsFixture } from "../../test/support/sessions.ts";
import type { SessionRecord } from "../model/records.ts";

/** A session another process left `running`, with its event stored. */
async function leftRunning(
  f: Awaited<ReturnType<typeof sessionsFixture>>,
  over: Partial<SessionRecord>,
) {
  const record = sessionRecord({
    id: "ses_left",
    project_id: "prj_1",
    build_id: "bld_1",
    event_id: "evt_left",
    state: "running",
    ...over,
  });
  await f.stores.sessions.put(record);
  await f.stores.events.put({
    id: "evt_left",
    project_id: "prj_1",
    trigger_id: "trg_x",
    trigger_name: "x",
    webhook_id: "wh_x",
    event_type: "post",
    data: {} as never,
    session_id: record.id,
    created_at: record.created_at,
  });
  return record;
}

describe("Recovery", () => {
  it("after a restart resumes a durable session from its journal and interrupts a plain one", async () => {
    const ran: string[] = [];
    const f = await sessionsFixture({
      durable_steps: async (_s, wf) => {
        await wf.activity("m.one", () => ran.push("one"));
        await wf.activity("m.two", () => ran.push("two"));
      },
    });
    await leftRunning(f, { entry: "handlers.py:durable_steps", durable: true });
    await f.stores.journals.append("ses_left", {
      seq: 0,
      kind: "activity",
      function: "m.one",
      result: Buffer.from("1").toString("base64"),
    });
    const plain = sessionRecord({ id: "ses_plain", project_id: "prj_1", state: "created" });
    await f.stores.sessions.put(plain);
    const counts = await f.manager.recover();
    expect(counts).toEqual({ resumed: 1, started: 0, interrupted: 1 });
    const resumed = await f.manager.whenEnded("ses_left");
    expect(resumed).toMatchObject({ state: "completed", replayed_steps: 1 });
    expect(ran).toEqual(["two"]);
    // recover() resolved once the session it interrupted was stored as ended.
    expect(await f.stores.sessions.get("ses_plain")).toMatchObject({
      state: "error",
      error: { message: "interrupted" },
    });
    const log = await f.stores.logs.get("ses_left");
    expect(log.some((e) => e.kind === "warning" && e.text === "owner stopped; resuming here")).toBe(
      true,
    );
  });

  it("recover() resolves once the sessions it interrupted are stored", async () => {
    const f = await sessionsFixture({ on_post: () => {} });
    await leftRunning(f, { entry: "handlers.py:on_post" });
    const release = f.holdWrites();
    let ended = false;
    f.manager.onEnd("ses_left", () => (ended = true));
    let recovered = false;
    const recovering = f.manager.recover().then((counts) => {
      recovered = true;
      return counts;
    });
    while (!ended && !recovered) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(recovered).toBe(false); // interrupted, not yet stored
    release();
    expect(await recovering).toEqual({ resumed: 0, started: 0, interrupted: 1 });
    expect(await f.stores.sessions.get("ses_left")).toMatchObject({
      state: "error",
      error: { message: "interrupted" },
    });
  });

  it("an end it writes leaves one index entry, wherever a late write of the owner put one", async () => {
    const f = await sessionsFixture({ on_post: () => {} });
    const rec = await leftRunning(f, { entry: "handlers.py:on_post", state: "created" });
    // The stalled owner's `running` landed late, after a read that still saw `created`: as
    // storage holds it then, an entry under both states.
    await f.stores.sessions.commit(rec.id, { record: { ...rec, state: "running" }, was: null });
    await f.manager.recover();
    const entries = (await f.stores.sessionIndex.entries("prj_1")).filter((e) => e.id === rec.id);
    expect(entries.map((e) => e.state)).toEqual(["error"]);
    await f.manager.dispose();
  });

  it("after a restart runs, once, a session that never started; a synchronous one ends, never run", async () => {
    const ran: string[] = [];
    const f = await sessionsFixture({ on_post: (s) => void ran.push(s.sessionId) });
    const waiting = await leftRunning(f, {
      ...{ entry: "handlers.py:on_post", state: "created", started_at: null },
    });
    await f.stores.events.put({ ...(await f.stores.events.get("evt_left"))!, id: "evt_sync" });
    const sync = sessionRecord({
      ...{ id: "ses_sync", project_id: "prj_1", build_id: "bld_1", event_id: "evt_sync" },
      ...{ state: "created", started_at: null, is_sync: true, entry: "handlers.py:on_post" },
    });
    await f.stores.sessions.put(sync);
    expect(await f.manager.recover()).toEqual({ resumed: 0, started: 1, interrupted: 1 });
    expect(await f.manager.whenEnded(waiting.id)).toMatchObject({ state: "completed" });
    expect(ran).toEqual([waiting.id]);
    expect(await f.stores.sessions.get("ses_sync")).toMatchObject({
      state: "error",
      started_at: null,
      error: { message: "never started: the instance holding its request stopped before it did" },
    });
    const log = await f.stores.logs.get(waiting.id);
    expect(log.map((e) => e.kind === "warning" && e.text).filter(Boolean)).toEqual([
      "the service stopped before this session started; starting it now",
    ]);
  });
});
