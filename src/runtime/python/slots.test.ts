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
});
