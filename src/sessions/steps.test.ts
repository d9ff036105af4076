import { describe, expect, it } from "vitest";
import { HooklineError } from "../errors.ts";
import { RunGone } from "../events/subscriptions.ts";
import type { JournalStep } from "../model/records.ts";
import { SessionJournal } from "./journal.ts";
import { serveStep } from "./steps.ts";

function journal(durable = true, steps: JournalStep[] = []) {
  const stored: JournalStep[] = [];
  const j = new SessionJournal({ durable, steps, store: async (s) => void stored.push(s) });
  j.begin();
  return { j, stored };
}

describe("serveStep", () => {
  it("serves live, journals the step with its value, then replies", async () => {
    const { j, stored } = journal();
    const reply = await serveStep(
      j,
      { kind: "subscribe", name: "hook", filter: "" },
      () => "sub_1",
    );
    expect(reply).toEqual({ ok: true, value: "sub_1" });
    expect(stored).toEqual([
      { seq: 0, kind: "subscribe", name: "hook", filter: "", value: "sub_1" },
    ]);
  });

  it("journals a refusal as the step, so a replay raises it again", async () => {
    const { j, stored } = journal();
    const fail = () => {
      throw new HooklineError("bad_request", 'unknown source "nope"');
    };
    const reply = await serveStep(j, { kind: "subscribe", name: "nope", filter: "" }, fail);
    expect(reply).toEqual({ ok: false, error: "ValueError", message: 'unknown source "nope"' });
    const replay = journal(true, stored).j;
    const again = await serveStep(
      replay,
      { kind: "subscribe", name: "nope", filter: "", seq: 0 },
      () => {
        throw new Error("a replay must not ask live");
      },
    );
    expect(again).toEqual(reply);
  });

  it("calls live for an outcome before anything awaits, and acks activities once stored", async () => {
    const { j, stored } = journal();
    const order: string[] = [];
    const served = serveStep(
      j,
      { kind: "outcome", outcome: { status_code: 200, headers: {}, body: null, more: false } },
      () => order.push("outcome"),
    );
    order.push("after call");
    await served;
    expect(order).toEqual(["outcome", "after call"]);
    const ack = await serveStep(
      j,
      { kind: "activity", seq: 1, function: "m.f", result: "AA==" },
      () => null,
    );
    expect(ack).toEqual({ ok: true, value: null });
    expect(stored.map((s) => s.kind)).toEqual(["outcome", "activity"]);
  });

  it("puts an activity step on the journal's chain before anything awaits", async () => {
    const { j, stored } = journal();
    void serveStep(j, { kind: "activity", seq: 0, function: "m.f", result: "AA==" }, () => null);
    await j.settled(); // taken right after the call, as a run ending at once would
    expect(stored.map((s) => s.seq)).toEqual([0]);
  });

  it("answers a replayed activity from the record, and never records one it does not have", async () => {
    const act: JournalStep = { seq: 0, kind: "activity", function: "m.f", result: "AA==" };
    const { j, stored } = journal(true, [act]);
    const ask = { kind: "activity", function: "m.f" } as const;
    expect(await serveStep(j, { ...ask, seq: 0 }, () => null)).toEqual({ ok: true, value: act });
    await expect(serveStep(j, { ...ask, seq: 1 }, () => null)).rejects.toThrow(
      "step 1: no activity m.f on record to replay",
    );
    expect(stored).toEqual([]);
  });

  it("refuses an activity step in a non-durable session, and numbers without keeping", async () => {
    const { j, stored } = journal(false);
    await expect(
      serveStep(j, { kind: "activity", function: "f", result: "" }, () => null),
    ).rejects.toThrow(/non-durable/);
    await serveStep(j, { kind: "sleep", ms: 1 }, () => null);
    expect(stored).toEqual([]);
  });

  it("records nothing for a wait whose run is gone: the run that replays waits again", async () => {
    const { j, stored } = journal();
    const gone = () => Promise.reject(new RunGone());
    await expect(
      serveStep(j, { kind: "next_event", ids: ["sub_1"], timeoutMs: null }, gone),
    ).rejects.toBeInstanceOf(RunGone);
    expect(stored).toEqual([]);
  });
});
