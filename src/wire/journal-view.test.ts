import { describe, expect, it } from "vitest";
import type { JournalStep } from "../model/records.ts";
import { stepFailed } from "./journal-view.ts";

describe("a journal step's failure, as the log and a re-run from the failure read it", () => {
  const apart = (field: "result" | "error") => ({ field, parts: 3, bytes: 3_000_000 });
  const cases: [JournalStep, boolean][] = [
    [{ seq: 0, kind: "activity", function: "h.f", result: "gA==" }, false],
    [{ seq: 0, kind: "activity", function: "h.f", error: "gA==" }, true],
    [{ seq: 0, kind: "activity", function: "h.f", apart: apart("result") }, false],
    [{ seq: 0, kind: "activity", function: "h.f", apart: apart("error") }, true],
    [
      { seq: 0, kind: "subscribe", name: "t", filter: "", error: "ValueError", message: "no" },
      true,
    ],
    [{ seq: 0, kind: "outcome" }, false],
  ];
  it.each(cases)("%j failed: %s", (step, failed) => expect(stepFailed(step)).toBe(failed));
});
