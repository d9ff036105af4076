import { describe, expect, it } from "vitest";
import type { JournalStep } from "../model/records.ts";
import { NonDeterminismError, SessionJournal } from "./journal.ts";
import { serveRetry } from "./retries.ts";
import { serveStep } from "./steps.ts";

function journal(durable = true, steps: JournalStep[] = []) {
  const stored: JournalStep[] = [];
  const j = new SessionJournal({ durable, steps, store: async (s) => void stored.push(s) });
  j.begin();
  return { j, stored };
}

const retry = (attempt: number, ms = 1000) =>
  ({ kind: "retry", seq: 0, function: "h.flaky", attempt, ms, error: "RVJS" }) as const;
const last = {
  kind: "activity",
  seq: 0,
  function: "h.flaky",
  result: "T0s=",
  attempts: 3,
} as const;
const noLive = () => {
  throw new Error("a replayed step must not be served live");
};

describe("serveRetry", () => {
  it("journals each failed attempt pending, with its deadline, before it waits", async () => {
    const { j, stored } = journal();
    const waits: number[] = [];
    const wait = async (until: number) => void waits.push(until);
    expect(await serveRetry(j, retry(1), 10_000, wait)).toEqual({ ok: true, value: null });
    expect(await serveRetry(j, retry(2, 2000), 12_000, wait)).toEqual({ ok: true, value: null });
    expect(waits).toEqual([11_000, 14_000]);
    const pending = { seq: 0, kind: "activity", function: "h.flaky", error: "RVJS" };
    expect(stored).toEqual([
      { ...pending, attempts: 1, retry_at: 11_000 },
      { ...pending, attempts: 2, retry_at: 14_000 },
    ]);
    // The last attempt ends the step at the same number: on record, replacing the pending one.
    expect(await serveStep(j, last, () => null)).toEqual({ ok: true, value: null });
    expect(stored.at(-1)).toEqual(last);
    // And then the number is taken for good.
    await expect(serveStep(j, last, () => null)).rejects.toThrow("step 0 was taken twice");
  });

  it("resumes a pending step: its deadline stands, its attempts are not made again", async () => {
    const pending: JournalStep = {
      seq: 0,
      kind: "activity",
      function: "h.flaky",
      error: "RVJS",
      attempts: 2,
      retry_at: 50_000,
    };
    const { j, stored } = journal(true, [pending]);
    // The replay asks for step 0: the answer is the pending record (its attempts so far).
    const asked = await serveStep(j, { kind: "activity", seq: 0, function: "h.flaky" }, noLive);
    expect(asked).toEqual({ ok: true, value: pending });
    const waits: number[] = [];
    await serveRetry(j, retry(2, 0), 30_000, async (until) => void waits.push(until));
    expect(waits).toEqual([50_000]); // what was left of the wait, not a new one
    expect(stored).toEqual([]);
    await serveRetry(j, retry(3, 500), 60_000, async () => {});
    expect(stored).toEqual([{ ...pending, attempts: 3, retry_at: 60_500 }]);
    // The last attempt is served live (recorded) though its number is on record.
    expect(await serveStep(j, last, () => null)).toEqual({ ok: true, value: null });
    expect(stored.at(-1)).toEqual(last);
    expect(j.unfinished()).toBeNull();
  });

  it("refuses a retry of a step the journal holds finished, or of another function", async () => {
    const { j } = journal(true, [last]);
    await expect(serveRetry(j, retry(1), 0, async () => {})).rejects.toBeInstanceOf(
      NonDeterminismError,
    );
    const other = { ...retry(1), function: "h.other" };
    const { j: j2 } = journal(true, [{ ...last, retry_at: 5, attempts: 1 }]);
    await expect(serveRetry(j2, other, 0, async () => {})).rejects.toThrow(
      "the journal recorded activity h.flaky but the handler now calls activity h.other",
    );
  });

  it("has no place in a session without a journal", async () => {
    await expect(serveRetry(journal(false).j, retry(1), 0, async () => {})).rejects.toThrow(
      "a retry step in a non-durable session",
    );
  });
});
