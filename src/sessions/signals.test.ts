import { describe, expect, it } from "vitest";
import { RunGone } from "../events/subscriptions.ts";
import { MAX_QUEUED_SIGNALS, SignalQueues } from "./signals.ts";

describe("SignalQueues", () => {
  it("keeps signals sent before the wait, in order, per name", async () => {
    const q = new SignalQueues();
    q.push("ses_1", { name: "a", payload: 1 });
    q.push("ses_1", { name: "b", payload: 2 });
    q.push("ses_1", { name: "a", payload: 3 });
    expect(await q.next("ses_1", ["b"], 0)).toEqual({ name: "b", payload: 2 });
    expect(await q.next("ses_1", ["a", "b"], 0)).toEqual({ name: "a", payload: 1 });
    expect(await q.next("ses_1", ["a"], 0)).toEqual({ name: "a", payload: 3 });
    expect(await q.next("ses_1", ["a"], 0)).toBeNull();
  });

  it("hands a signal to the waiting next, and times out with null", async () => {
    const q = new SignalQueues();
    const waiting = q.next("ses_1", ["go"], null);
    q.push("ses_1", { name: "other", payload: null }); // not waited for: queued
    q.push("ses_1", { name: "go", payload: "now" });
    expect(await waiting).toEqual({ name: "go", payload: "now" });
    expect(await q.next("ses_1", ["nothing"], 10)).toBeNull();
    expect(await q.next("ses_1", ["other"], 0)).toEqual({ name: "other", payload: null });
  });

  it("refuses a signal past the bound and keeps what it had", async () => {
    const q = new SignalQueues();
    for (let i = 0; i < MAX_QUEUED_SIGNALS; i++) q.push("ses_1", { name: "n", payload: i });
    expect(() => q.push("ses_1", { name: "n", payload: "extra" })).toThrow(
      /already has 1000 signals waiting to be read \(the limit\)/,
    );
    expect(await q.next("ses_1", ["n"], 0)).toEqual({ name: "n", payload: 0 });
    q.push("ses_1", { name: "n", payload: "fits again" });
  });

  it("drops the queue when the session ends; a waiting next gets null", async () => {
    const q = new SignalQueues();
    q.push("ses_1", { name: "n", payload: 1 });
    const waiting = q.next("ses_2", ["n"], null);
    q.close("ses_1");
    q.close("ses_2");
    expect(await waiting).toBeNull();
    expect(await q.next("ses_1", ["n"], 0)).toBeNull();
  });

  it("a new wait replaces the old one, which never answers (its run is gone)", async () => {
    const q = new SignalQueues();
    let oldAnswered = false;
    void q.next("ses_1", ["go"], 5).then(() => {
      oldAnswered = true;
    });
    const current = q.next("ses_1", ["go"], null);
    await new Promise((r) => setTimeout(r, 30)); // past the old wait's timeout
    q.push("ses_1", { name: "go", payload: 1 });
    expect(await current).toEqual({ name: "go", payload: 1 });
    expect(oldAnswered).toBe(false);
  });

  it("a wait given up (its run's process died) takes no signal: the next wait gets it", async () => {
    const q = new SignalQueues();
    const dead = q.next("ses_1", ["go"], 60_000);
    q.abandonWait("ses_1");
    await expect(dead).rejects.toBeInstanceOf(RunGone);
    q.push("ses_1", { name: "go", payload: 5 }); // between the crash and the new run's wait
    expect(await q.next("ses_1", ["go"], null)).toEqual({ name: "go", payload: 5 });
  });
});
