import { describe, expect, it, vi } from "vitest";
import type { HandlerEvent } from "../model/records.ts";
import { compileFilter } from "./filter.ts";
import { RunGone, SUBSCRIPTION_BUFFER, Subscriptions } from "./subscriptions.ts";

const event = (id: string, path = "/"): HandlerEvent =>
  ({
    event_id: id,
    session_id: "",
    event_type: "post",
    data: { url: { path } },
  }) as unknown as HandlerEvent;

describe("Subscriptions", () => {
  it("buffers events from the moment of subscribing, oldest first", async () => {
    const subs = new Subscriptions();
    subs.publish("prj:hook", event("before"));
    const id = subs.add("ses_1", "prj:hook", null);
    subs.publish("prj:hook", event("a"));
    subs.publish("prj:other", event("elsewhere"));
    subs.publish("prj:hook", event("b"));
    expect((await subs.next("ses_1", [id], 0))?.event_id).toBe("a");
    expect((await subs.next("ses_1", [id], 0))?.event_id).toBe("b");
    expect(await subs.next("ses_1", [id], 0)).toBeNull(); // 0: no wait
  });

  it("keeps only what the filter accepts", async () => {
    const subs = new Subscriptions();
    const id = subs.add("ses_1", "prj:hook", compileFilter('data.url.path.endsWith("/done")'));
    subs.publish("prj:hook", event("skip", "/x"));
    subs.publish("prj:hook", event("take", "/x/done"));
    expect((await subs.next("ses_1", [id], 0))?.event_id).toBe("take");
    expect(await subs.next("ses_1", [id], 0)).toBeNull();
  });

  it("a waiting next gets the next event at once; another times out with null", async () => {
    const subs = new Subscriptions();
    const a = subs.add("ses_1", "prj:a", null);
    const b = subs.add("ses_1", "prj:b", null);
    const waiting = subs.next("ses_1", [a, b], null);
    subs.publish("prj:b", event("on b"));
    expect((await waiting)?.event_id).toBe("on b");
    const t0 = Date.now();
    expect(await subs.next("ses_1", [a], 30)).toBeNull();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
  });

  it("times out at the timeout, not before and not later (a hand-driven clock)", async () => {
    vi.useFakeTimers();
    try {
      const subs = new Subscriptions();
      const a = subs.add("ses_1", "prj:a", null);
      let got: HandlerEvent | null | "waiting" = "waiting";
      void subs.next("ses_1", [a], 2000).then((e) => {
        got = e;
      });
      await vi.advanceTimersByTimeAsync(1999);
      expect(got).toBe("waiting");
      await vi.advanceTimersByTimeAsync(1);
      expect(got).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it("drops the oldest event past the buffer, and says so", async () => {
    const drops: string[] = [];
    const subs = new Subscriptions((session, sub) => drops.push(`${session} ${sub}`));
    const id = subs.add("ses_1", "prj:hook", null);
    for (let i = 0; i <= SUBSCRIPTION_BUFFER; i++) subs.publish("prj:hook", event(`e${i}`));
    expect(drops).toEqual([`ses_1 ${id}`]);
    expect((await subs.next("ses_1", [id], 0))?.event_id).toBe("e1");
  });

  it("refuses ids of other sessions, and forgets removed subscriptions and ended sessions", async () => {
    const subs = new Subscriptions();
    const mine = subs.add("ses_1", "prj:hook", null);
    const other = subs.add("ses_2", "prj:hook", null);
    expect(() => subs.next("ses_1", [other], 0)).toThrow(`unknown subscription "${other}"`);
    expect(subs.has(mine, "ses_1")).toBe(true);
    expect(subs.has(mine, "ses_2")).toBe(false);
    expect(subs.remove(mine)).toBe(true);
    expect(subs.remove(mine)).toBe(false);
    const again = subs.add("ses_2", "prj:x", null);
    subs.removeSession("ses_2");
    expect(subs.has(other, "ses_2") || subs.has(again, "ses_2")).toBe(false);
    subs.publish("prj:hook", event("nobody")); // no subscriber left: nothing kept
  });

  it("re-adding under a recorded id keeps the one subscription (a replay restores it)", async () => {
    const subs = new Subscriptions();
    expect(subs.add("ses_1", "prj:hook", null, "sub_fixed")).toBe("sub_fixed");
    subs.publish("prj:hook", event("kept"));
    expect(subs.add("ses_1", "prj:hook", null, "sub_fixed")).toBe("sub_fixed");
    expect((await subs.next("ses_1", ["sub_fixed"], 0))?.event_id).toBe("kept");
  });

  it("a wait given up (its run's process died) takes no event: the next wait gets it", async () => {
    const subs = new Subscriptions();
    const id = subs.add("ses_1", "prj:hook", null);
    const dead = subs.next("ses_1", [id], 60_000);
    subs.abandonWaits("ses_1");
    await expect(dead).rejects.toBeInstanceOf(RunGone);
    subs.publish("prj:hook", event("meanwhile"));
    expect((await subs.next("ses_1", [id], null))?.event_id).toBe("meanwhile");
  });
});
