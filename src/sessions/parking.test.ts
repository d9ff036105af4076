import { describe, expect, it } from "vitest";
import { manualClock } from "../../test/support/clock.ts";
import { isParked } from "../../test/support/sessions.ts";
import { type Parkable, Parking } from "./parking.ts";
import { SessionLog } from "./session-log.ts";

function parkable(over: Partial<Parkable> = {}) {
  const released: string[] = [];
  const session: Parkable = {
    id: "ses_1",
    durable: true,
    log: new SessionLog(),
    canPark: () => true,
    release: () => void released.push("ses_1"),
    ...over,
  };
  return { session, released };
}

/** A wait that the test ends. */
function waiting() {
  let end = () => {};
  const promise = new Promise<void>((r) => {
    end = r;
  });
  return { promise, end };
}

describe("Parking", () => {
  it("releases the process of a durable session still waiting after evictAfterMs", async () => {
    const clock = manualClock();
    const parking = new Parking({ evictAfterMs: 2000, clock });
    const { session, released } = parkable();
    const w = waiting();
    parking.watch(session, w.promise, 60_000);
    await clock.advance(1999);
    expect(released).toEqual([]);
    await clock.advance(1);
    expect(released).toEqual(["ses_1"]);
    expect(isParked(parking, "ses_1")).toBe(true);
    expect(session.log.entries.at(-1)).toMatchObject({
      kind: "warning",
      text: "waiting for an event: process released",
    });
    let woke = false;
    void parking.woken("ses_1")!.then(() => {
      woke = true;
    });
    await clock.advance(0);
    expect(woke).toBe(false);
    parking.wake("ses_1");
    await clock.advance(0);
    expect(woke).toBe(true);
    parking.forget("ses_1");
    expect(parking.woken("ses_1")).toBeNull();
  });

  it("leaves alone waits that end in time, short waits, non-durable sessions and 'never'", async () => {
    const clock = manualClock();
    const parking = new Parking({ evictAfterMs: 2000, clock });
    const { session, released } = parkable();
    const w = waiting();
    parking.watch(session, w.promise, 60_000);
    await clock.advance(1000);
    w.end();
    await clock.advance(5000);
    parking.watch(session, waiting().promise, 2000); // not longer than the delay
    parking.watch(parkable({ durable: false }).session, waiting().promise, 60_000);
    new Parking({ evictAfterMs: -1, clock }).watch(session, waiting().promise, 60_000);
    await clock.advance(10_000);
    expect(released).toEqual([]);
    expect(clock.pending()).toBe(0);
  });

  it("does not park a session that may not be parked now (stopping, no process)", async () => {
    const clock = manualClock();
    const parking = new Parking({ evictAfterMs: 10, clock });
    const { session, released } = parkable({ canPark: () => false });
    parking.watch(session, waiting().promise, 1000);
    await clock.advance(20);
    expect(released).toEqual([]);
    expect(isParked(parking, "ses_1")).toBe(false);
  });
});
