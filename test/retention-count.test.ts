import { describe, expect, it } from "vitest";
import { newId } from "../src/ids.ts";
import { silentLogger } from "../src/log.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores, type Stores } from "../src/storage/records.ts";
import { createPruner } from "../src/storage/retention.ts";
import { eventRecord, sessionRecord } from "./support/records.ts";
import { REDIS_URL, redisTestUrl, warnIfNoRedis } from "./support/redis.ts";

/**
 * The retention pruner's own count of what is stored, after each pass: it decides when the
 * next pass comes, so a count too high passes on every arrival (each pass lists a whole store)
 * and one too low lets storage grow past its limit. Over real stores (memory, and Redis when
 * REDIS_URL is set), each pass's listing counted.
 */
const LIMIT = 10;
const FIRST_LOOK = 200;

/** Counts the listings a pass makes: the session index's entries, the events' keys. */
function countPasses(stores: Stores) {
  const passes = { sessions: 0, events: 0 };
  const entries = stores.sessionIndex.entries.bind(stores.sessionIndex);
  stores.sessionIndex.entries = (projectId) => {
    passes.sessions++;
    return entries(projectId);
  };
  const keys = stores.events.keys.bind(stores.events);
  stores.events.keys = () => {
    passes.events++;
    return keys();
  };
  return passes;
}

const event = () => eventRecord({ id: newId("evt") });

const drivers = ["memory:", ...(REDIS_URL ? ["redis"] : [])];
warnIfNoRedis("the pruner's count over Redis");

describe.each(drivers)("the pruner's count after a pass (%s)", (driver) => {
  const storage = () => createStorageFromUrl(driver === "redis" ? redisTestUrl() : driver);

  it("sessions: running ones count; a pass comes exactly when the stored count goes over the limit", async () => {
    const stores = createStores(storage());
    const pruner = createPruner(stores, { sessionsPerProject: LIMIT, events: 1e9 }, silentLogger);
    const passes = countPasses(stores);
    const p = newId("prj");
    const stored = async () => (await stores.sessionIndex.count(p)) as number;
    const put = async (state: SessionRecord["state"]) =>
      stores.sessions.put(sessionRecord({ id: newId("ses"), project_id: p, state }));
    // Five running sessions: never pruned, and part of what is stored.
    for (let i = 0; i < 5; i++) await put("running");
    const end = async () => {
      await put("completed");
      pruner.sessionEnded(p);
      await pruner.idle();
    };
    for (let i = 0; i < FIRST_LOOK - 1; i++) await end();
    expect(passes.sessions, "no pass before the first look").toBe(0);
    await end(); // the first look: 205 stored, down to 9 (the five running among them)
    const at =
      "[passes, sessions stored]: a pass when the pruner's count of what is stored goes over the limit of 10";
    expect([passes.sessions, await stored()], at).toEqual([1, 9]);
    await end(); // 10: at the limit, no pass
    expect([passes.sessions, await stored()], at).toEqual([1, 10]);
    await end(); // 11: over it, a pass, down to 9
    expect([passes.sessions, await stored()], at).toEqual([2, 9]);
    for (let round = 0; round < 3; round++) {
      await end();
      await end();
      expect([passes.sessions, await stored()], at).toEqual([3 + round, 9]);
    }
    await stores.dispose();
  });

  it("events: a pass comes exactly when the stored count goes over the limit", async () => {
    const stores = createStores(storage());
    const pruner = createPruner(stores, { sessionsPerProject: 1e9, events: LIMIT }, silentLogger);
    // Read past the counting: the test's own look is no pass.
    const keys = stores.events.keys.bind(stores.events);
    const stored = async () => (await keys()).length;
    const passes = countPasses(stores);
    const store = async () => {
      await stores.events.put(event());
      pruner.eventStored();
      await pruner.idle();
    };
    const at =
      "[passes, events stored]: a pass when the pruner's count of what is stored goes over the limit of 10";
    for (let i = 0; i < FIRST_LOOK; i++) await store();
    expect([passes.events, await stored()], at).toEqual([1, 9]);
    await store(); // 10: no pass
    expect([passes.events, await stored()], at).toEqual([1, 10]);
    await store(); // 11: a pass, down to 9
    expect([passes.events, await stored()], at).toEqual([2, 9]);
    for (let round = 0; round < 3; round++) {
      await store();
      await store();
      expect([passes.events, await stored()], at).toEqual([3 + round, 9]);
    }
    await stores.dispose();
  });
});
