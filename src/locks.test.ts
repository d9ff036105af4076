import { describe, expect, it } from "vitest";
import { serialQueue } from "./locks.ts";

describe("serialQueue", () => {
  it("runs work in order, reports a failure and goes on, and is idle only when all is done", async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    const q = serialQueue((e) => errors.push(e));
    const later = (name: string, ms: number) => async () => {
      await new Promise((r) => setTimeout(r, ms));
      seen.push(name);
      return name;
    };
    const first = q.run(later("a", 30));
    const failing = q.run(async () => {
      throw new Error("b failed");
    });
    const third = q.run(later("c", 1));
    await expect(failing).rejects.toThrow("b failed");
    let idle = false;
    const done = q.idle().then(() => {
      idle = true;
    });
    // Work queued while someone waits for idle is waited for too.
    void q.run(later("d", 20));
    await done;
    expect(idle).toBe(true);
    expect(seen).toEqual(["a", "c", "d"]);
    expect(await first).toBe("a");
    expect(await third).toBe("c");
    expect(errors.map(String)).toEqual(["Error: b failed"]);
  });
});
