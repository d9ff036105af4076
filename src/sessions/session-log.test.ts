import { describe, expect, it } from "vitest";
import type { SessionLogEntry } from "../model/records.ts";
import type { ActivityInFlight } from "../model/run-records.ts";
import { SessionLog } from "./session-log.ts";

const t = "2026-12-06T08:00:00.000Z";
const done = (fn: string): SessionLogEntry => ({
  t,
  kind: "activity",
  function: fn,
  duration_ms: 5,
  ok: true,
});

describe("a session log's activities in flight", () => {
  it("keeps each start until the entry that ends it, tells starts apart, and stores none", () => {
    const log = new SessionLog();
    const heard: ActivityInFlight[] = [];
    const entries: SessionLogEntry[] = [];
    log.listenStarts((a) => heard.push(a));
    log.listen((e) => entries.push(e));
    log.started({ id: 1, function: "m.a", t });
    log.started({ id: 2, function: "m.b", t });
    expect(heard.map((a) => a.id)).toEqual([1, 2]);
    // A start is no entry: nothing to write, nothing in the log.
    expect([log.entries, entries, log.dirty]).toEqual([[], [], false]);
    log.append(done("m.b"), 2);
    expect([...log.inFlight.keys()]).toEqual([1]);
    // An older runner's report names no start: it is an entry, as before, and ends none.
    log.append(done("m.c"));
    expect([...log.inFlight.keys()]).toEqual([1]);
    expect(log.entries.map((e) => (e.kind === "activity" ? e.function : ""))).toEqual([
      "m.b",
      "m.c",
    ]);
  });
});
