import { describe, expect, it } from "vitest";
import { sessionRecord } from "../../test/support/records.ts";
import { newId } from "../ids.ts";
import { silentLogger } from "../log.ts";
import type { EventRecord, SessionRecord } from "../model/records.ts";
import { createStorageFromUrl } from "./driver.ts";
import { createStores } from "./records.ts";
import { createPruner, deleteOldEvents, deleteOldSessions } from "./retention.ts";

const t = new Date().toISOString();

function session(project_id: string, state: SessionRecord["state"]): SessionRecord {
  return sessionRecord({ id: newId("ses"), project_id, event_id: newId("evt"), state });
}

function event(project_id: string): EventRecord {
  return {
    id: newId("evt"),
    project_id,
    trigger_id: "trg_x",
    trigger_name: "hook",
    webhook_id: "w",
    event_type: "post",
    data: {} as EventRecord["data"],
    session_id: null,
    created_at: t,
  };
}

describe("retention", () => {
  it("deletes the oldest ended sessions (log and journal too) and the oldest events, down to 90 % of the limit", async () => {
    const stores = createStores(createStorageFromUrl("memory:"));
    const p = newId("prj");
    const running = session(p, "running");
    await stores.sessions.put(running); // the oldest, but running: kept
    const ended: SessionRecord[] = [];
    for (let i = 0; i < 14; i++) {
      const s = session(p, "completed");
      ended.push(s);
      await stores.sessions.put(s);
      await stores.logs.put(s.id, [{ t, kind: "state", state: "completed" }]);
      await stores.journals.append(s.id, { seq: 0, kind: "outcome" });
    }
    const events: EventRecord[] = [];
    for (let i = 0; i < 12; i++) {
      const e = event(p);
      events.push(e);
      await stores.events.put(e);
    }
    // One pass of each, with limits of 10 sessions a project and 5 events.
    await deleteOldSessions(stores, p, 10, silentLogger);
    await deleteOldEvents(stores, 5, silentLogger);
    const left = (await stores.sessions.list({ project_id: p, limit: 100 })).map((s) => s.id);
    expect(left).toHaveLength(9);
    expect(left).toContain(running.id);
    expect(left).toContain(ended.at(-1)!.id);
    expect(left).not.toContain(ended[0]!.id);
    expect(await stores.logs.get(ended[0]!.id)).toEqual([]);
    expect(await stores.journals.list(ended[0]!.id)).toEqual([]);
    expect(await stores.logs.get(ended.at(-1)!.id)).toHaveLength(1);
    const kept = (await stores.events.keys()).sort();
    expect(kept).toEqual(events.slice(-4).map((e) => e.id));
  });

  it("counts first after 200 arrivals, then passes only when the count goes over the limit", async () => {
    const stores = createStores(createStorageFromUrl("memory:"));
    const pruner = createPruner(stores, { sessionsPerProject: 1_000, events: 10 }, silentLogger);
    const store = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await stores.events.put(event("prj_x"));
        pruner.eventStored();
        await pruner.idle();
      }
    };
    await store(199);
    expect(await stores.events.keys()).toHaveLength(199); // not looked at yet
    await store(1);
    expect(await stores.events.keys()).toHaveLength(9); // counted: 200 > 10, down to 9
    await store(1);
    expect(await stores.events.keys()).toHaveLength(10); // at the limit: no pass
    await store(1);
    expect(await stores.events.keys()).toHaveLength(9); // over it: down to 90 %
  });
});
