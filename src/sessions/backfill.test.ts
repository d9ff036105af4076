import { describe, expect, it } from "vitest";
import { Subscriptions } from "../events/subscriptions.ts";
import { ulidBody } from "../ids.ts";
import type { HandlerEvent, JournalStep, ProjectDoc } from "../model/records.ts";
import { backfill } from "./backfill.ts";
import { SessionJournal } from "./journal.ts";

const at = (prefix: string, ms: number) => `${prefix}_${ulidBody(ms)}`;
const ev = (id: string, data: unknown = {}): HandlerEvent =>
  ({ event_id: id, session_id: null, event_type: "post", data }) as HandlerEvent;
const doc = { project: { id: "prj_1" }, triggers: [{ name: "wake" }] } as unknown as ProjectDoc;

describe("backfill of a taken-over durable session", () => {
  it("hands over the events published since it subscribed that its journal shows untaken", async () => {
    const t0 = 1_800_000_000_000;
    const sub = at("sub", t0);
    const before = ev(at("evt", t0 - 5));
    const taken = ev(at("evt", t0 + 10), { k: "a" });
    const missed = ev(at("evt", t0 + 20), { k: "a" });
    const filtered = ev(at("evt", t0 + 30), { k: "b" });
    const other = ev(at("evt", t0 + 40), { k: "a" });
    const steps: JournalStep[] = [
      { seq: 0, kind: "subscribe", name: "wake", filter: "data.k == 'a'", value: sub },
      { seq: 1, kind: "next_event", value: taken },
    ];
    const journal = new SessionJournal({ durable: true, steps, store: async () => {} });
    journal.begin();
    const subs = new Subscriptions();
    const reopened = journal.restoreSubscriptions(subs, "ses_1", doc);
    expect(reopened).toEqual([{ id: sub, source: "prj_1:wake" }]);
    // Arrived live on the new owner before the replay: kept once, after the missed one.
    const live = ev(at("evt", t0 + 50), { k: "a" });
    subs.publish("prj_1:wake", live);
    const history = async () =>
      [before, taken, missed, filtered, live].map((event) => ({ source: "prj_1:wake", event }));
    const all = [...(await history()), { source: "prj_1:other", event: other }];
    expect(await backfill(async () => all, subs, journal, reopened)).toBe(1);
    const got: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      got.push((await subs.next("ses_1", [sub], 0))?.event_id ?? null);
    }
    expect(got).toEqual([missed.event_id, live.event_id, null]);
  });
});
