import { describe, expect, it, vi } from "vitest";
import { BurstWait } from "./burst-wait.ts";

/**
 * A wait over a front whose business the test sets (`crowdedLooks`: how many more times it says
 * it took two requests at once), the times it was asked that, and the order sessions began in.
 */
function waitOver(maxMs = 60_000) {
  const front = { busy: false, crowdedLooks: 0, asked: 0 };
  const crowded = () => {
    front.asked++;
    if (front.crowdedLooks === 0) return false;
    front.crowdedLooks--;
    return true;
  };
  const begun: string[] = [];
  const wait = new BurstWait<string>({ busy: () => front.busy, crowded, maxMs }, (id) =>
    begun.push(id),
  );
  return { front, begun, wait };
}

/** Sessions "a" then "b" handed over while the front is busy: both wait. */
function twoWaiting(maxMs?: number) {
  const w = waitOver(maxMs);
  w.front.busy = true;
  w.wait.add("a", "a");
  w.wait.add("b", "b");
  return w;
}

describe("BurstWait: sessions the front hands over wait out its burst", () => {
  it("begins a session at once while the front is not busy", () => {
    const { begun, wait } = waitOver();
    wait.add("a", "a");
    expect(begun).toEqual(["a"]);
    expect(wait.size).toBe(0);
  });

  it("holds sessions while the front is busy, and begins them all, in order, once it is not", async () => {
    const { front, begun, wait } = twoWaiting();
    await new Promise((r) => setTimeout(r, 20)); // several looks: still busy
    expect(begun).toEqual([]);
    expect(wait.size).toBe(2);
    front.busy = false;
    await vi.waitFor(() => expect(begun).toEqual(["a", "b"]));
    expect(wait.size).toBe(0);
  });

  it("begins them all once the first has waited maxMs, though the front is still busy", async () => {
    const since = Date.now();
    const { begun } = twoWaiting(30);
    await vi.waitFor(() => expect(begun).toEqual(["a", "b"]));
    expect(Date.now() - since).toBeGreaterThanOrEqual(29);
  });

  it("a session coming while others wait waits with them, though the front is free that instant: the next look begins them in order", async () => {
    const { front, begun, wait } = waitOver();
    front.busy = true;
    wait.add("a", "a");
    front.busy = false; // between a burst's answers and the client's next requests
    wait.add("b", "b");
    expect(begun).toEqual([]);
    expect(wait.size).toBe(2);
    await vi.waitFor(() => expect(begun).toEqual(["a", "b"]));
  });

  it("after a burst, begins nothing at a look that finds the front free until a whole look has passed without two requests at once", async () => {
    const { front, begun } = twoWaiting();
    front.crowdedLooks = 3; // the client paused: the front free, but it held several at once
    front.busy = false;
    await vi.waitFor(() => expect(begun).toEqual(["a", "b"]));
    // Asked once as the wait began, then at each look: three crowded looks, the fourth quiet
    // begins them, and no look comes after.
    await new Promise((r) => setTimeout(r, 10));
    expect(front.asked).toBe(5);
  });

  it("begins one session now when asked (a stop), the others go on waiting", () => {
    const { begun, wait } = twoWaiting();
    expect(wait.take("b")).toBe(true);
    expect(wait.take("b")).toBe(false); // begun already
    expect(wait.take("z")).toBe(false); // never waited
    expect(begun).toEqual(["b"]);
    expect(wait.size).toBe(1);
  });

  it("begins every waiting session at once when flushed (the service drains)", async () => {
    const { front, begun, wait } = twoWaiting();
    wait.flush();
    expect(begun).toEqual(["a", "b"]);
    front.busy = false;
    await new Promise((r) => setTimeout(r, 10)); // no look left to begin anything twice
    expect(begun).toEqual(["a", "b"]);
  });

  it("gives every waiting session back unbegun when cleared (the service stops)", async () => {
    const { front, begun, wait } = twoWaiting();
    expect(wait.clear()).toEqual(["a", "b"]);
    expect(wait.size).toBe(0);
    front.busy = false;
    await new Promise((r) => setTimeout(r, 10)); // no look left to begin them after all
    expect(begun).toEqual([]);
  });
});
