/**
 * What the front door's thread and the session host's thread both read without asking each
 * other: how many sessions are alive here, how many the front committed that the host has not
 * taken yet, and whether the service is stopping. One small SharedArrayBuffer, read and written
 * with Atomics, so that an accept never waits on the other thread's event loop.
 */

/** Slots of the shared counters. */
const HERE = 0; // sessions the host holds (running or waiting for a slot), as it last said
const ARRIVING = 1; // sessions the front committed, not yet taken by the host
const FLAGS = 2; // bit 0: draining (the stop signal), bit 1: closing (no session admitted)
const TAKING = 3; // requests the front is taking now (a held sync one until it is answered)
const WAITING = 4; // of those, held sync ones waiting for their session's outcome
const CROWDED = 5; // 1 once the front worked on two requests at once (read and cleared: `crowded`)
const HANDING = 6; // sessions answered for whose commit has yet to land (then: to the host)
const SLOTS = 7;

/** How often a drain looks whether the front's requests are answered. */
const IDLE_POLL_MS = 20;

const DRAINING = 1;
const CLOSING = 2;
const FULL = 4; // every Python slot is taken: a held session may wait for one

/**
 * The shared counters over one buffer (made by the host, handed to the front as it starts).
 * `maxActive` is the same bound the host's admission keeps: the front admits a session while
 * the sessions here and those arriving leave room.
 * @example const gate = frontGate(10_000); new Worker(url, { workerData: { gate: gate.buffer } });
 */
export function frontGate(maxActive: number, buffer = new SharedArrayBuffer(SLOTS * 4)) {
  const slots = new Int32Array(buffer);
  const flag = (bit: number, on: boolean) => {
    if (on) Atomics.or(slots, FLAGS, bit);
    else Atomics.and(slots, FLAGS, ~bit);
  };
  return {
    buffer,
    maxActive,
    /** The host's count of sessions here, told at every change. */
    setHere(n: number): void {
      Atomics.store(slots, HERE, n);
    },
    /** Committed by the front and not yet taken by the host. */
    get arriving(): number {
      return Atomics.load(slots, ARRIVING);
    },
    /**
     * The front's admission: one more session if the ones here and arriving leave room; it is
     * then counted as arriving until the host takes it (`arrived`) or the front gives it up
     * (`release`, its commit failed). Two threads admitting the last slot at once may both
     * take it: the bound may be passed by one.
     */
    reserve(): boolean {
      if (Atomics.load(slots, FLAGS) & CLOSING) return false;
      if (Atomics.load(slots, HERE) + Atomics.load(slots, ARRIVING) >= maxActive) return false;
      Atomics.add(slots, ARRIVING, 1);
      return true;
    },
    /** The host admitted a session for the front (a sync one): counted as arriving. */
    take(): void {
      Atomics.add(slots, ARRIVING, 1);
    },
    /** The front gave up a reserved session (nothing was stored). */
    release(): void {
      Atomics.sub(slots, ARRIVING, 1);
    },
    /** The host took an arriving session (after counting it here). */
    arrived(): void {
      Atomics.sub(slots, ARRIVING, 1);
    },
    ...requestCounts(slots),
    /**
     * Whether the front is working on a request now: taking one that is not just waiting for
     * its session's outcome (async sessions handed over wait it out: SVC_BURST_YIELD).
     */
    get busy(): boolean {
      return inHand(slots) > Atomics.load(slots, WAITING);
    },
    /** The stop signal: new webhooks go to the host, which refuses them (503). */
    get draining(): boolean {
      return (Atomics.load(slots, FLAGS) & DRAINING) !== 0;
    },
    setDraining(on: boolean): void {
      flag(DRAINING, on);
    },
    /**
     * Every Python slot is taken (the runtime says so as it changes): a held session's admission
     * is then the host's, which knows how long the wait would be.
     */
    get full(): boolean {
      return (Atomics.load(slots, FLAGS) & FULL) !== 0;
    },
    setFull(on: boolean): void {
      flag(FULL, on);
    },
    /** No session is admitted any more (the host's lifecycle is closing). */
    get closing(): boolean {
      return (Atomics.load(slots, FLAGS) & CLOSING) !== 0;
    },
    setClosing(on: boolean): void {
      flag(CLOSING, on);
    },
  };
}

export type FrontGate = ReturnType<typeof frontGate>;

/**
 * The requests the front is taking and the sessions it is handing over. TAKING is read first: a
 * request's hand-over begins before its answer, so once the request is no longer counted, its
 * hand-over is (until it is done).
 */
function inHand(slots: Int32Array): number {
  const taking = Atomics.load(slots, TAKING);
  return taking + Atomics.load(slots, HANDING);
}

/**
 * What the front is working on, counted where both threads read it: its requests, the held
 * ones among them only waiting for their session's outcome, the sessions answered for that wait
 * for their commit to go to the host, and whether two requests were at work at once (a burst).
 */
function requestCounts(slots: Int32Array) {
  return {
    /** The front begins (`+1`) or has answered (`-1`) a request it takes itself. */
    taking(delta: 1 | -1): void {
      const working = Atomics.add(slots, TAKING, delta) + delta - Atomics.load(slots, WAITING);
      if (delta > 0 && working > 1) Atomics.store(slots, CROWDED, 1);
    },
    /** A session answered for waits for its commit to go to the host: busy, but no request. */
    handing(delta: 1 | -1): void {
      Atomics.add(slots, HANDING, delta);
    },
    /** A held request begins (`+1`) or ends (`-1`) its wait for its session's outcome. */
    waiting(delta: 1 | -1): void {
      Atomics.add(slots, WAITING, delta);
    },
    /** Whether two requests were at work at once since the last call (a burst); clears it. */
    crowded(): boolean {
      return Atomics.exchange(slots, CROWDED, 0) === 1;
    },
    /** Resolves once the front has answered what it took and handed over its sessions (a drain). */
    async idle(): Promise<void> {
      while (inHand(slots) > 0) {
        await new Promise((r) => setTimeout(r, IDLE_POLL_MS).unref());
      }
    },
  };
}
