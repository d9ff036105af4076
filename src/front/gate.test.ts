import { describe, expect, it } from "vitest";
import { frontGate } from "./gate.ts";

describe("the counters the front door and the host share", () => {
  it("admits while the sessions here and arriving leave room, and counts each on its way", () => {
    const host = frontGate(3);
    const front = frontGate(3, host.buffer); // the other thread's view of the same buffer
    host.setHere(1);
    expect(front.reserve()).toBe(true);
    expect(front.reserve()).toBe(true);
    expect(front.reserve()).toBe(false); // 1 here + 2 arriving
    expect(host.arriving).toBe(2);
    front.release(); // a commit that failed
    host.setHere(2);
    host.arrived(); // the host took the other one
    expect(host.arriving).toBe(0);
    expect(front.reserve()).toBe(true);
    host.take(); // a held session the host admitted for the front
    expect(front.arriving).toBe(2);
    expect(front.reserve()).toBe(false);
  });

  it("admits nothing once the host closes, and says when the host drains", () => {
    const host = frontGate(10);
    const front = frontGate(10, host.buffer);
    host.setDraining(true);
    expect(front.draining).toBe(true);
    expect(front.reserve()).toBe(true);
    host.setClosing(true);
    expect(front.closing).toBe(true);
    expect(front.draining).toBe(true);
    expect(front.reserve()).toBe(false);
    host.setDraining(false);
    expect(front.draining).toBe(false);
    expect(front.closing).toBe(true);
  });

  it("is idle once every request the front took is answered", async () => {
    const gate = frontGate(10);
    gate.taking(1);
    gate.taking(1);
    let idle = false;
    const waiting = gate.idle().then(() => {
      idle = true;
    });
    gate.taking(-1);
    await new Promise((r) => setTimeout(r, 60));
    expect(idle).toBe(false);
    gate.taking(-1);
    await waiting;
    expect(idle).toBe(true);
  });

  it("is crowded once it works on two requests at once, held sync ones not counted, until asked", () => {
    const gate = frontGate(10);
    gate.taking(1);
    gate.taking(-1);
    gate.taking(1); // one after the other: one client's way
    expect(gate.crowded()).toBe(false);
    gate.waiting(1); // that one now only waits for its session's outcome
    gate.taking(1);
    expect(gate.crowded()).toBe(false);
    gate.taking(1); // two at work at once: a burst
    gate.taking(-1);
    gate.taking(-1);
    expect(gate.crowded()).toBe(true);
    expect(gate.crowded()).toBe(false); // asking cleared it
    // A session answered for, on its way to the host: busy, but one request is not a crowd.
    gate.handing(1);
    gate.taking(1);
    expect(gate.busy).toBe(true);
    expect(gate.crowded()).toBe(false);
    gate.taking(-1);
    gate.handing(-1);
    expect(gate.busy).toBe(false);
    // The other thread's view of the same buffer.
    const other = frontGate(10, gate.buffer);
    other.taking(1);
    other.taking(1);
    expect(gate.crowded()).toBe(true);
  });
});
