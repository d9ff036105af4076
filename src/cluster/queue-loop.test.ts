import { afterEach, describe, expect, it, vi } from "vitest";
import { QueueLoop } from "./queue-loop.ts";

/** Lets the loop run until it waits again (its steps are promise turns; timers are fake). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe("QueueLoop", () => {
  afterEach(() => vi.useRealTimers());

  it("looks at the queue when woken for it, and at a session's end only while it had no free slot", async () => {
    vi.useFakeTimers();
    let takes = 0;
    let free = true;
    const loop = new QueueLoop({
      take: async () => {
        takes++;
        return null;
      },
      passOn: async () => {},
    });
    loop.serve(
      () => free,
      () => {},
    );
    await settle();
    expect(takes).toBe(1); // a first look, then it waits for a NOTIFY
    loop.freed(); // a session ended while there was room: nothing new to take
    await settle();
    expect(takes).toBe(1);
    loop.notified("other.0", "me.0"); // queued for another instance
    await settle();
    expect(takes).toBe(1);
    loop.notified("me.0", "me.0");
    await settle();
    expect(takes).toBe(2);
    loop.notified("", "me.0"); // for any instance
    await settle();
    expect(takes).toBe(3);
    free = false; // full: it waits for a slot
    loop.poke();
    await settle();
    free = true;
    loop.freed(); // a session ended: the slot it waited for
    await settle();
    expect(takes).toBe(4);
    await loop.stop();
  });
});
