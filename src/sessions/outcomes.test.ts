import { describe, expect, it } from "vitest";
import { manualClock } from "../../test/support/clock.ts";
import { sessionRecord } from "../../test/support/records.ts";
import type { Outcome } from "../model/records.ts";
import { SessionChannel } from "./channel.ts";
import { Outcomes } from "./outcomes.ts";

const final = (status_code: number): Outcome => ({
  status_code,
  headers: {},
  body: Buffer.from("b"),
  more: false,
});

describe("Outcomes", () => {
  it("gives a held request the first final outcome; later ones change nothing", async () => {
    const outcomes = new Outcomes(manualClock());
    outcomes.open("ses_1");
    const wait = outcomes.wait("ses_1", 30_000)!;
    const partial = outcomes.offer("ses_1", { ...final(202), more: true }, true);
    expect(partial).toMatchObject([{ kind: "outcome", status_code: 202, sent: false }]);
    const sent = outcomes.offer("ses_1", final(201), true);
    expect(sent).toMatchObject([{ kind: "outcome", status_code: 201, sent: true, body: "Yg==" }]);
    expect(await wait).toEqual({ kind: "outcome", outcome: final(201) });
    const late = outcomes.offer("ses_1", final(500), true);
    expect(late.map((e) => e.kind)).toEqual(["outcome", "warning"]);
    // Asked again, the request gets the same outcome at once.
    expect(await outcomes.wait("ses_1", 1)).toEqual({ kind: "outcome", outcome: final(201) });
  });

  it("an outcome of an asynchronous trigger is logged with a warning and sent to nobody", () => {
    const outcomes = new Outcomes(manualClock());
    outcomes.open("ses_1");
    const entries = outcomes.offer("ses_1", final(200), false);
    expect(entries).toMatchObject([
      { kind: "outcome", sent: false },
      { kind: "warning", text: expect.stringContaining("asynchronous trigger") },
    ]);
  });

  it("times a held request out on the clock", async () => {
    const clock = manualClock();
    const outcomes = new Outcomes(clock);
    outcomes.open("ses_1");
    let got: unknown = null;
    void outcomes.wait("ses_1", 30_000)!.then((w) => {
      got = w;
    });
    await clock.advance(29_999);
    expect(got).toBeNull();
    await clock.advance(1);
    expect(got).toEqual({ kind: "timeout" });
    expect(clock.pending()).toBe(0);
  });

  it("tells waiters and watchers the end, and forgets the session", async () => {
    const clock = manualClock();
    const outcomes = new Outcomes(clock);
    // Watchers wait on the session channel, which the held requests hear too (as in manager.ts).
    const channel = new SessionChannel();
    channel.listen((e) => e.type !== "started" && outcomes.end(e.record.id, e.record));
    outcomes.open("ses_1");
    const wait = outcomes.wait("ses_1", 30_000)!;
    const ends: string[] = [];
    channel.onEnd("ses_1", (r) => ends.push(r.state));
    const off = channel.onEnd("ses_1", () => ends.push("unwatched"));
    off();
    outcomes.offer("ses_1", final(200), true); // the watcher waits on for the end
    const record = sessionRecord({ id: "ses_1", state: "completed" });
    channel.tell({ type: "ended", record, written: Promise.resolve() });
    expect(await wait).toEqual({ kind: "outcome", outcome: final(200) });
    expect(ends).toEqual(["completed"]);
    expect(outcomes.has("ses_1")).toBe(false);
    expect(outcomes.wait("ses_1", 1)).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it("a session that ends without a final outcome answers its held request with the end", async () => {
    const outcomes = new Outcomes(manualClock());
    outcomes.open("ses_1");
    const wait = outcomes.wait("ses_1", 30_000)!;
    const record = sessionRecord({ id: "ses_1", state: "error" });
    outcomes.end("ses_1", record);
    expect(await wait).toEqual({ kind: "ended", session: record });
  });

  it("answers another event's held request by its event id, until that session ends", async () => {
    const outcomes = new Outcomes(manualClock());
    outcomes.open("ses_held", { eventId: "evt_held", isSync: true });
    outcomes.open("ses_async", { eventId: "evt_async", isSync: false });
    const wait = outcomes.wait("ses_held", 30_000)!;
    const entries = outcomes.offerForEvent("evt_held", final(202));
    expect(entries).toMatchObject([{ kind: "outcome", status_code: 202, sent: true }]);
    expect(await wait).toEqual({ kind: "outcome", outcome: final(202) });
    // Not held here: an async trigger's event, an unknown one, one whose session ended.
    for (const id of ["evt_async", "evt_unknown"]) {
      const missed = outcomes.offerForEvent(id, final(200));
      expect(missed).toMatchObject([
        { kind: "outcome", sent: false },
        { kind: "warning", text: expect.stringContaining(`no request of event ${id} is held`) },
      ]);
    }
    outcomes.end("ses_held", sessionRecord({ id: "ses_held", event_id: "evt_held" }));
    expect(outcomes.offerForEvent("evt_held", final(200))[1]?.kind).toBe("warning");
  });
});
