import { describe, expect, it } from "vitest";
import { redisTestUrl, warnIfNoRedis } from "../../test/support/redis.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { scheduleState } from "./state.ts";

/** The schedules' state over every storage driver alike. */
const drivers: Array<[string, () => string]> = [["memory", () => "memory:"]];
if (warnIfNoRedis("the schedule state over Redis")) drivers.push(["redis", redisTestUrl]);

describe.each(drivers)("scheduleState over %s", (_name, url) => {
  it("keeps each trigger's last due slot until forgotten", async () => {
    const storage = createStorageFromUrl(url());
    const state = scheduleState(storage);
    try {
      expect(await state.lastDue("trg_a")).toBeNull();
      const due = Date.parse("2026-03-01T10:15:00.000Z");
      await state.setLastDue("trg_a", due);
      expect(await state.lastDue("trg_a")).toBe(due);
      expect(await state.lastDue("trg_b")).toBeNull();
      // Another reader of the same storage (another instance) sees it.
      expect(await scheduleState(storage).lastDue("trg_a")).toBe(due);
      await state.forget("trg_a");
      expect(await state.lastDue("trg_a")).toBeNull();
    } finally {
      await storage.dispose();
    }
  });
});
