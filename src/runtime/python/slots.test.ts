import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { Slots } from "./slots.ts";

describe("Slots", () => {
  it("grants up to max at once and then in FIFO order", async () => {
    const slots = new Slots(2, 10);
    const a = await slots.acquire();
    const b = await slots.acquire();
    const order: string[] = [];
    const track = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const c = slots.acquire().then(track("c"));
    const d = slots.acquire().then(track("d"));
    expect(slots.waiting).toBe(2);
    a();
    a(); // a second release is a no-op
    (await c)();
    b();
    (await d)();
    expect(order).toEqual(["c", "d"]);
    expect(slots.running).toBe(0);
  });

  it("says when every slot is taken and when one is free again, once each", async () => {
    const told: boolean[] = [];
    const slots = new Slots(2, 10, Date.now, (full) => told.push(full));
    const a = await slots.acquire();
    expect(told).toEqual([]);
    const b = await slots.acquire();
    expect(told).toEqual([true]);
    const waiting = slots.acquire(); // waits: the slot passes to it, still full
    a();
    const c = await waiting;
    expect(told).toEqual([true]);
    b();
    expect(told).toEqual([true, false]);
    c();
    expect(told).toEqual([true, false]);
  });

  it("refuses when the queue is full", async () => {
    const slots = new Slots(1, 1);
    await slots.acquire();
    void slots.acquire();
    await expect(slots.acquire()).rejects.toMatchObject({
      code: "unavailable",
      message: "too many sessions: 1 running and 1 waiting",
    });
  });

  it("drops a waiter whose signal aborts", async () => {
    const slots = new Slots(1, 5);
    const release = await slots.acquire();
    const abort = new AbortController();
    const waiting = slots.acquire(abort.signal);
    abort.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
    expect(slots.waiting).toBe(0);
    release();
    expect(slots.running).toBe(0);
  });

  it("serves held requests before the other waiters, each lane in order", async () => {
    const slots = new Slots(1, 10);
    const first = await slots.acquire();
    const order: string[] = [];
    const take = (name: string, held: boolean) =>
      slots.acquire(undefined, held).then((release) => {
        order.push(name);
        release();
      });
    const all = [take("a1", false), take("a2", false), take("h1", true), take("h2", true)];
    first();
    await Promise.all(all);
    expect(order).toEqual(["h1", "h2", "a1", "a2"]);
  });

  it("expects no wait while a slot is free, else its place times the pace slots come free", async () => {
    let now = 1000;
    const slots = new Slots(2, 10, () => now);
    expect(slots.expectedWaitMs()).toBe(0);
    const a = await slots.acquire();
    expect(slots.expectedWaitMs()).toBe(0);
    const b = await slots.acquire(); // all taken at t=1000
    void slots.acquire(); // an async waiter
    void slots.acquire(); // and another
    now = 1400;
    a(); // 400 ms after they were all taken: the pace is 400 ms
    now = 1500;
    // Behind one async waiter: 2 × max(400, 100).
    expect(slots.expectedWaitMs()).toBe(800);
    // A held request waits behind no async one.
    expect(slots.expectedWaitMs(true)).toBe(400);
    now = 3000;
    // Nothing came free for 1.6 s: the slots are held longer than the pace says.
    expect(slots.expectedWaitMs(true)).toBe(1600);
    b();
  });

  describe("giving way to the front door's burst", () => {
    /** Slots whose front is busy while `front.busy` says so; the clock is the test's. */
    function yielding(max: number, maxWaiting = 10, maxMs = 500) {
      const front = { busy: true, now: 0 };
      const slots = new Slots(max, maxWaiting, () => front.now, undefined, {
        busy: () => front.busy,
        maxMs,
      });
      return { front, slots };
    }
    const granted = (p: Promise<unknown>) => {
      let got = false;
      void p.then(() => {
        got = true;
      });
      return () => got;
    };

    it("a queued session waits while the front is busy, though a slot is free; then it starts", async () => {
      const { front, slots } = yielding(2);
      const got = granted(slots.acquire());
      await sleep(10);
      expect(got()).toBe(false);
      expect(slots.running).toBe(0);
      expect(slots.waiting).toBe(1);
      front.busy = false; // the burst is over: the next look grants it
      await vi.waitFor(() => expect(got()).toBe(true), { timeout: 10_000, interval: 2 });
      expect(slots.running).toBe(1);
    });

    it("a held session never waits for the front", async () => {
      const { slots } = yielding(2);
      const release = await slots.acquire(undefined, true);
      expect(slots.running).toBe(1);
      release();
    });

    it("no queued session waits longer than maxMs, however long the burst", async () => {
      const { front, slots } = yielding(2, 10, 500);
      const first = granted(slots.acquire());
      front.now = 300;
      const second = granted(slots.acquire());
      await sleep(10);
      expect([first(), second()]).toEqual([false, false]);
      front.now = 500; // the first has waited 500 ms, the second 200
      await vi.waitFor(() => expect(first()).toBe(true), { timeout: 10_000, interval: 2 });
      await sleep(10);
      expect(second()).toBe(false);
      front.now = 800;
      await vi.waitFor(() => expect(second()).toBe(true), { timeout: 10_000, interval: 2 });
    });

    it("a slot freed while the front is busy goes to a held waiter, not a queued one", async () => {
      const { front, slots } = yielding(1);
      front.busy = false;
      const running = await slots.acquire();
      front.busy = true;
      const queued = granted(slots.acquire());
      const held = granted(slots.acquire(undefined, true));
      running();
      await vi.waitFor(() => expect(held()).toBe(true), { timeout: 10_000, interval: 2 });
      await sleep(10);
      expect(queued()).toBe(false);
    });

    it("lets those that gave way go first once the front is free, in order", async () => {
      const { front, slots } = yielding(1);
      const order: string[] = [];
      const waiting = slots.acquire().then((release) => {
        order.push("waited");
        release();
      });
      front.busy = false;
      // Asked before the next look: the one that waited still goes first.
      const later = slots.acquire().then((release) => {
        order.push("later");
        release();
      });
      await Promise.all([waiting, later]);
      expect(order).toEqual(["waited", "later"]);
    });

    it("counts the free slots in the queue's bound while sessions give way", async () => {
      const { slots } = yielding(2, 1);
      const refused: number[] = [];
      for (const i of [1, 2, 3]) slots.acquire().catch(() => refused.push(i));
      // 2 slots free + 1 waiting place: three may wait, the fourth is refused.
      await expect(slots.acquire()).rejects.toMatchObject({ code: "unavailable" });
      expect(refused).toEqual([]);
      expect(slots.waiting).toBe(3);
    });
  });
});
