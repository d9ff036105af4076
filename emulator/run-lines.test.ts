import { describe, expect, it } from "vitest";
import type { SessionRecord } from "../src/model/records.ts";
import { elapsed, redactUrls } from "../src/runtime/python/progress.ts";
import { box } from "./dev-loop.ts";
import { MAX_PRINTS_SHOWN, runDuration, runLines } from "./run-lines.ts";

/** A session record as the dev terminal gets it at its end. */
function ended(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: "ses_1",
    trigger_name: "hook",
    entry: "handlers.py:on_hook",
    state: "completed",
    error: null,
    created_at: "2026-12-06T04:00:00.000Z",
    started_at: "2026-12-06T04:00:00.010Z",
    ended_at: "2026-12-06T04:00:01.540Z",
    updated_at: "2026-12-06T04:00:01.540Z",
    ...over,
  } as SessionRecord;
}

describe("the dev terminal's lines", () => {
  it("says trigger, state, time and page; prints beneath, at most MAX_PRINTS_SHOWN", () => {
    const prints = Array.from({ length: MAX_PRINTS_SHOWN + 3 }, (_, i) => `line ${i}`);
    const lines = runLines(ended(), prints, "http://127.0.0.1:9980");
    expect(lines[0]).toBe("[hook] completed in 1.5 s  http://127.0.0.1:9980/ui/sessions/ses_1");
    expect(lines.slice(1, 3)).toEqual(["    line 0", "    line 1"]);
    expect(lines.at(-1)).toBe("    … 3 more (cli session prints ses_1)");
    expect(lines).toHaveLength(1 + MAX_PRINTS_SHOWN + 1);
  });

  it("ends a failure with its error's last line; a manual run is named by its entry", () => {
    const error = {
      message: "KeyError: 'total'",
      traceback:
        "Traceback (most recent call last):\n  File \"handlers.py\", line 3\nKeyError: 'total'\n",
    };
    const lines = runLines(
      ended({ state: "error", error, trigger_name: "", manual: true }),
      ["checking"],
      "http://h",
    );
    expect(lines).toEqual([
      "[run handlers.py:on_hook] error in 1.5 s  http://h/ui/sessions/ses_1",
      "    checking",
      "    error: KeyError: 'total'",
    ]);
  });

  it("says durations and boxes as a person reads them", () => {
    expect([runDuration(42), runDuration(1530), runDuration(61_000)]).toEqual([
      "42 ms",
      "1.5 s",
      "1 min 1 s",
    ]);
    expect([elapsed(4200), elapsed(65_000)]).toEqual(["4 s", "1m05s"]);
    expect(box(["ab", "abcd"])).toEqual(["╭──────╮", "│ ab   │", "│ abcd │", "╰──────╯"]);
    expect(box([])).toEqual([]);
  });

  it("leaves an index URL's password out of what it says", () => {
    expect(redactUrls("tried https://me:t0ken@mirror.example/simple, file:///opt/pypi")).toBe(
      "tried https://****@mirror.example/simple, file:///opt/pypi",
    );
  });
});
