import { describe, expect, it } from "vitest";
import { systemClock } from "../clock.ts";
import { keyedLock } from "../locks.ts";
import type { ConnectionVarStore } from "../oauth/store.ts";
import { type ClaimedRead, claimedRead } from "./claimed-read.ts";

/**
 * A connection's cursor in a store two instances share, and the fleet's claims on it; the
 * instance under test reads from `stored`, another one may be reading too.
 */
function sharedCursor(first: string) {
  const fleet = { stored: first, claims: new Set<string>(), writes: [] as string[] };
  /** Called at a claim, before it is decided: what another instance did meanwhile. */
  let meanwhile = (_key: string) => {};
  const d = {
    cluster: {
      async once(key: string) {
        meanwhile(key);
        if (fleet.claims.has(key)) return false;
        fleet.claims.add(key);
        return true;
      },
      async forget(key: string) {
        fleet.claims.delete(key);
      },
    },
    clock: systemClock,
    // A claimed read only writes the next cursor.
    store: {
      async write(_p: string, _c: string, writes: { value: string }[]) {
        fleet.stored = writes[0]!.value;
        fleet.writes.push(writes[0]!.value);
      },
    } as unknown as ConnectionVarStore,
  };
  const reads: string[] = [];
  const spec: ClaimedRead<string> = {
    lock: "prj:cal",
    busy: "this connection",
    async find() {
      const cursor = fleet.stored;
      const at = { projectId: "prj", connection: "cal", cursorVar: "Token" };
      return { ...at, target: cursor, cursor, claim: `pull:${cursor}` };
    },
    async read(cursor) {
      reads.push(cursor);
      return { events: [], cursor: `${cursor}+` };
    },
  };
  return { fleet, d, spec, reads, onClaim: (f: (key: string) => void) => (meanwhile = f) };
}

describe("a claimed read of a connection's changes", () => {
  it("reads from the stored cursor under its claim, saves the next once stored, lets go", async () => {
    const { fleet, d, spec, reads } = sharedCursor("c1");
    const { settle } = await claimedRead(d, keyedLock(), spec);
    expect(reads).toEqual(["c1"]);
    expect(fleet.claims).toEqual(new Set(["pull:c1"]));
    await settle(true);
    expect(fleet.writes).toEqual(["c1+"]);
    expect(fleet.claims.size).toBe(0);
  });

  it("reads on from the new cursor when the reader before saved it and let go between its look and its claim", async () => {
    const { fleet, d, spec, reads, onClaim } = sharedCursor("c1");
    fleet.claims.add("pull:c1"); // another instance is reading from c1
    onClaim((key) => {
      if (key !== "pull:c1" || !fleet.claims.has(key)) return;
      fleet.stored = "c2"; // it stored its events, saved its next cursor, and let go
      fleet.claims.delete(key);
    });
    const { settle } = await claimedRead(d, keyedLock(), spec);
    expect(reads).toEqual(["c2"]); // not c1 again: one change, one read
    await settle(true);
    expect(fleet.stored).toBe("c2+");
    expect(fleet.claims.size).toBe(0);
  });
});
