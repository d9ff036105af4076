import { describe, expect, it } from "vitest";
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
});
