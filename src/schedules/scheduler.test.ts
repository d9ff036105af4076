import { describe, expect, it } from "vitest";
import { manualClock } from "../../test/support/clock.ts";
import { silentLogger } from "../log.ts";
import type { ProjectDoc, TriggerRecord } from "../model/records.ts";
import { type Firing, Scheduler } from "./scheduler.ts";
import type { ScheduleState } from "./state.ts";

function memoryState(): ScheduleState & { map: Map<string, number> } {
  const map = new Map<string, number>();
  return {
    map,
    lastDue: async (id) => map.get(id) ?? null,
    setLastDue: async (id, due) => void map.set(id, due),
    forget: async (id) => void map.delete(id),
  };
}

const T0 = "2026-03-01T10:00:00.000Z";

function trigger(name: string, schedule: string, updated = T0): TriggerRecord {
  return {
    id: `trg_${name}`,
    project_id: "prj_1",
    name,
    type: "schedule",
    webhook_id: "",
    schedule,
    timezone: "UTC",
    event_type: "",
    call: "h.py:f",
    is_sync: false,
    is_durable: false,
    filter: "",
    created_at: updated,
    updated_at: updated,
  };
}

function project(triggers: TriggerRecord[], active: string | null = "dep_1"): ProjectDoc {
  return {
    project: {
      id: "prj_1",
      name: "demo",
      env_id: "env_1",
      active_deployment_id: active,
      created_at: T0,
      updated_at: T0,
    },
    env: { id: "env_1", project_id: "prj_1", name: "default", created_at: T0 },
    triggers,
    vars: [],
  };
}

function setup(doc: ProjectDoc, start = "2026-03-01T10:00:00.500Z", state = memoryState()) {
  const docs = new Map([[doc.project.id, doc]]);
  const fired: Firing[] = [];
  const claims = new Set<string>();
  const time = manualClock(Date.parse(start));
  const scheduler = new Scheduler({
    projects: { list: async () => [...docs.values()], get: async (id) => docs.get(id) ?? null },
    state,
    claim: async (id, due) => !claims.has(`${id}:${due}`) && Boolean(claims.add(`${id}:${due}`)),
    fire: async (f) => void fired.push(f),
    log: silentLogger,
    clock: time,
  });
  const line = (f: Firing) => `${f.trigger.name} ${f.due.toISOString()} missed=${f.missed}`;
  /** Moves the clock on to `iso` and waits for the firings that set off. */
  const until = async (iso: string) => {
    await time.advance(Date.parse(iso) - time.now());
    await scheduler.idle();
  };
  return { scheduler, fired, docs, time, state, claims, until, lines: () => fired.map(line) };
}

describe("Scheduler", () => {
  it("fires each slot on time, saying when it was due and when it fired", async () => {
    const t = setup(project([trigger("tick", "@every 1s")]));
    await t.scheduler.start();
    expect(t.fired).toEqual([]);
    await t.time.advance(3000);
    await t.scheduler.idle();
    expect(t.lines()).toEqual([
      "tick 2026-03-01T10:00:01.000Z missed=0",
      "tick 2026-03-01T10:00:02.000Z missed=0",
      "tick 2026-03-01T10:00:03.000Z missed=0",
    ]);
    expect(t.fired[0]!.fired.toISOString()).toBe("2026-03-01T10:00:01.000Z");
    expect(t.state.map.get("trg_tick")).toBe(Date.parse("2026-03-01T10:00:03.000Z"));
    t.scheduler.dispose();
  });

  it("fires a schedule missed while down once at start, for the latest slot", async () => {
    const state = memoryState();
    state.map.set("trg_q", Date.parse("2026-03-01T10:00:00.000Z"));
    // Down for an hour and a bit: four quarter-hour slots passed.
    const t = setup(project([trigger("q", "*/15 * * * *")]), "2026-03-01T11:05:00.000Z", state);
    await t.scheduler.start();
    await t.scheduler.idle();
    expect(t.lines()).toEqual(["q 2026-03-01T11:00:00.000Z missed=3"]);
    expect(t.fired[0]!.fired.toISOString()).toBe("2026-03-01T11:05:00.000Z");
    // And not again for the same slots: the next is 11:15.
    await t.time.advance(9 * 60_000);
    await t.scheduler.idle();
    expect(t.fired).toHaveLength(1);
    await t.time.advance(60_000);
    await t.scheduler.idle();
    expect(t.lines()[1]).toBe("q 2026-03-01T11:15:00.000Z missed=0");
    t.scheduler.dispose();
  });

  it("does not make up slots from before the trigger was deployed", async () => {
    const t = setup(
      project([trigger("h", "@hourly", "2026-03-01T10:30:00.000Z")]),
      "2026-03-01T10:40:00.000Z",
    );
    await t.scheduler.start();
    await t.scheduler.idle();
    expect(t.fired).toEqual([]);
    // Armed for 11:00, the first slot after the deploy: nothing before it, one firing at it.
    await t.until("2026-03-01T10:59:59.999Z");
    expect(t.fired).toEqual([]);
    await t.until("2026-03-01T11:00:00.000Z");
    expect(t.lines()).toEqual(["h 2026-03-01T11:00:00.000Z missed=0"]);
    t.scheduler.dispose();
  });

  it("fires a slot once when two schedulers share the claims and the state", async () => {
    const a = setup(project([trigger("tick", "@every 1s")]));
    const b = new Scheduler({
      projects: {
        list: async () => [...a.docs.values()],
        get: async (id) => a.docs.get(id) ?? null,
      },
      state: a.state,
      claim: async (id, due) =>
        !a.claims.has(`${id}:${due}`) && Boolean(a.claims.add(`${id}:${due}`)),
      fire: async (f) => void a.fired.push(f),
      log: silentLogger,
      clock: a.time,
    });
    await Promise.all([a.scheduler.start(), b.start()]);
    await a.time.advance(5000);
    await Promise.all([a.scheduler.idle(), b.idle()]);
    expect(a.lines().map((l) => l.slice(5, 29))).toEqual([
      "2026-03-01T10:00:01.000Z",
      "2026-03-01T10:00:02.000Z",
      "2026-03-01T10:00:03.000Z",
      "2026-03-01T10:00:04.000Z",
      "2026-03-01T10:00:05.000Z",
    ]);
    a.scheduler.dispose();
    b.dispose();
  });

  it("applies a changed or removed schedule at once on reload", async () => {
    const t = setup(project([trigger("tick", "@every 1s"), trigger("slow", "@hourly")]));
    await t.scheduler.start();
    await t.time.advance(1000);
    await t.scheduler.idle();
    expect(t.fired).toHaveLength(1);
    // Redeploy: tick now every 10 s, slow removed.
    const changed = { ...trigger("tick", "@every 10s", "2026-03-01T10:00:01.200Z") };
    t.docs.set("prj_1", project([changed]));
    await t.scheduler.reload("prj_1");
    // tick is armed for its new slot, 10:00:10: nothing before it, one firing at it.
    await t.until("2026-03-01T10:00:09.999Z");
    expect(t.lines()).toEqual(["tick 2026-03-01T10:00:01.000Z missed=0"]);
    await t.until("2026-03-01T10:00:10.000Z");
    expect(t.lines()).toEqual([
      "tick 2026-03-01T10:00:01.000Z missed=0",
      "tick 2026-03-01T10:00:10.000Z missed=0",
    ]);
    // slow is not armed: its slot, 11:00, passes with only tick firing.
    await t.until("2026-03-01T11:00:00.000Z");
    expect(t.lines().filter((l) => !l.startsWith("tick "))).toEqual([]);
    expect(t.lines().at(-1)).toBe("tick 2026-03-01T11:00:00.000Z missed=0");
    // Undeployed: nothing is armed, so past every slot nothing fires, and no timer is left.
    t.docs.set("prj_1", project([changed], null));
    await t.scheduler.reload("prj_1");
    const before = t.lines();
    await t.until("2026-03-01T12:00:00.000Z");
    expect(t.lines()).toEqual(before);
    expect(t.time.pending()).toBe(0);
    t.scheduler.dispose();
  });

  it("never fires connection or webhook triggers, and stops its timer on dispose", async () => {
    const conn: TriggerRecord = { ...trigger("c", "@every 1s"), type: "connection" };
    const t = setup(project([conn, trigger("tick", "@every 1s")]));
    await t.scheduler.start();
    // Only tick is armed: over its first three slots, c never fires.
    await t.until("2026-03-01T10:00:03.000Z");
    const seen = [1, 2, 3].map((s) => `tick 2026-03-01T10:00:0${s}.000Z missed=0`);
    expect(t.lines()).toEqual(seen);
    t.scheduler.dispose();
    t.scheduler.dispose();
    expect(t.time.pending()).toBe(0);
    await t.time.advance(5000);
    expect(t.lines()).toEqual(seen);
  });
});
