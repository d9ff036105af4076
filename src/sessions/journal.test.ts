import { describe, expect, it } from "vitest";
import { Subscriptions } from "../events/subscriptions.ts";
import type { JournalStep, ProjectDoc } from "../model/records.ts";
import { contiguous, NonDeterminismError, SessionJournal } from "./journal.ts";

function journal(steps: JournalStep[] = [], store = async (_: JournalStep) => {}) {
  const j = new SessionJournal({ durable: true, steps, store });
  return j;
}

describe("SessionJournal", () => {
  it("numbers steps itself, or takes the runtime's number and counts on after it", () => {
    const j = journal();
    j.begin();
    expect(j.number(undefined)).toBe(0);
    expect(j.number(3)).toBe(3); // an activity finishing late under asyncio.gather
    expect(j.number(undefined)).toBe(4);
    expect(j.number(1)).toBe(1);
    expect(() => j.number(3)).toThrow("step 3 was taken twice");
    expect(() => j.number(-1)).toThrow(/not valid/);
  });

  it("begins after the replayed steps, up to the first gap", () => {
    const steps: JournalStep[] = [
      { seq: 2, kind: "sleep" },
      { seq: 0, kind: "outcome" },
      { seq: 1, kind: "unsubscribe", id: "sub_1" },
      { seq: 4, kind: "sleep" },
    ];
    const j = journal(steps);
    expect(j.begin().map((s) => s.seq)).toEqual([0, 1, 2]);
    expect(j.number(undefined)).toBe(3);
    expect(contiguous([{ seq: 1, kind: "outcome" }])).toEqual([]);
  });

  it("answers a replay from the record and refuses a step that contradicts it", () => {
    const sub: JournalStep = {
      seq: 1,
      kind: "subscribe",
      name: "hook",
      filter: "",
      value: "sub_1",
    };
    const act: JournalStep = { seq: 0, kind: "activity", function: "m.f", result: "AA==" };
    const j = journal([act, sub]);
    j.begin();
    expect(j.recorded(0, "activity", "m.f")).toEqual(act);
    expect(j.recorded(1, "subscribe", "hook")).toEqual(sub);
    expect(j.recorded(2, "sleep")).toBeNull();
    expect(() => j.recorded(1, "next_event")).toThrow(NonDeterminismError);
    expect(() => j.recorded(0, "activity", "m.g")).toThrow(
      "step 0: the journal recorded activity m.f but the handler now calls activity m.g",
    );
  });

  it("finds a run that ended before its replayed steps were all taken", () => {
    const j = journal([
      { seq: 0, kind: "sleep" },
      { seq: 1, kind: "outcome" },
    ]);
    j.begin();
    expect(j.unfinished()?.message).toBe(
      "NonDeterminismError: step 0: the handler returned but the journal recorded 2 steps; " +
        "a durable handler must make the same calls in the same order",
    );
    j.number(0);
    expect(j.unfinished()?.message).toContain("step 1: the handler returned");
    j.number(1);
    expect(j.unfinished()).toBeNull();
    j.begin(); // a resume starts counting again
    expect(j.unfinished()).toBeInstanceOf(NonDeterminismError);
  });

  it("stores steps one after another in the order they were taken", async () => {
    const stored: number[] = [];
    let releaseFirst = () => {};
    const first = new Promise<void>((r) => {
      releaseFirst = r;
    });
    // What is told of each step once it is stored (the journal's store resolved).
    const seen: number[] = [];
    const j = journal([], async (step) => {
      if (step.seq === 0) await first;
      stored.push(step.seq);
      await Promise.resolve();
      seen.push(step.seq);
    });
    j.begin();
    const a = j.record({ seq: 0, kind: "sleep" });
    const b = j.record({ seq: 1, kind: "outcome" });
    await new Promise((r) => setImmediate(r));
    expect(stored).toEqual([]); // the second waits for the first
    releaseFirst();
    await Promise.all([a, b]);
    expect(stored).toEqual([0, 1]);
    expect(seen).toEqual([0, 1]);
    // A later run replays them.
    expect(j.begin().map((s) => s.seq)).toEqual([0, 1]);
  });

  it("rejects with the step when storing fails, and keeps the chain going", async () => {
    let fail = true;
    const j = journal([], async () => {
      if (fail) throw new Error("disk full");
    });
    j.begin();
    await expect(j.record({ seq: 0, kind: "sleep" })).rejects.toThrow(
      "could not store journal step 0: disk full",
    );
    fail = false;
    await j.record({ seq: 1, kind: "sleep" });
    await j.settled();
  });

  it("keeps nothing for a non-durable session, and replays nothing", async () => {
    const stored: JournalStep[] = [];
    const j = new SessionJournal({
      durable: false,
      steps: [{ seq: 0, kind: "outcome" }],
      store: async (s) => void stored.push(s),
    });
    expect(j.begin()).toEqual([]);
    await j.record({ seq: 0, kind: "outcome" });
    expect(stored).toEqual([]);
    expect(j.recorded(0, "sleep")).toBeNull();
  });

  it("restores the subscriptions the replayed steps hold open, under their ids", async () => {
    const doc = { project: { id: "prj_1" }, triggers: [{ name: "hook" }] } as ProjectDoc;
    const j = journal([
      { seq: 0, kind: "subscribe", name: "hook", filter: "", value: "sub_a" },
      { seq: 1, kind: "subscribe", name: "hook", filter: "data.x == 1", value: "sub_b" },
      { seq: 2, kind: "unsubscribe", id: "sub_a" },
      { seq: 3, kind: "subscribe", name: "gone", filter: "", value: "sub_c" },
    ]);
    j.begin();
    const subs = new Subscriptions();
    j.restoreSubscriptions(subs, "ses_1", doc);
    expect(subs.has("sub_a", "ses_1")).toBe(false);
    expect(subs.has("sub_b", "ses_1")).toBe(true);
    expect(subs.has("sub_c", "ses_1")).toBe(false); // its trigger is no longer deployed
    const event = { event_id: "evt_1", session_id: "", event_type: "", data: { x: 1 } };
    subs.publish("prj_1:hook", event as never);
    expect(await subs.next("ses_1", ["sub_b"], 0)).toEqual(event);
  });
});
