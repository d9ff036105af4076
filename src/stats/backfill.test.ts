import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionRecord } from "../../test/support/records.ts";
import { idAt } from "../ids.ts";
import type { SessionRecord, SessionState } from "../model/records.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { BACKFILL_KEY, statsBackfill } from "./backfill.ts";
import { readOverview } from "./overview.ts";
import { bucketKey, createSessionStats, HOUR } from "./session-stats.ts";

let n = 0;
/** A session of `p/orders` created `ago` ms before now, ended `took` ms later (none: running). */
function rec(state: SessionState, ago: number, took: number | null = 10): SessionRecord {
  const at = Date.now() - ago;
  const id = `${idAt("ses", at).slice(0, -4)}${String(n++).padStart(4, "0")}`;
  return sessionRecord({
    id,
    project_id: "prj_p",
    project_name: "p",
    trigger_name: "orders",
    state,
    created_at: new Date(at).toISOString(),
    started_at: new Date(at).toISOString(),
    ended_at: took === null ? null : new Date(at + took).toISOString(),
  });
}

describe("counting the sessions stored before the counters", () => {
  let stores: Stores;
  let lines: string[];
  const log = {
    info: (l: string) => lines.push(l),
    warn: (l: string) => lines.push(l),
    error() {},
  };
  const put = (recs: SessionRecord[]) =>
    stores.sessions.commitMany(recs.map((r) => ({ id: r.id, change: { record: r, was: null } })));
  /** A start: a live counter and its backfill, run to its end. */
  const start = async () => {
    const live = createSessionStats(stores.storage);
    await statsBackfill(stores, live, log).start();
    return live;
  };
  const totals = async () => (await readOverview(stores.storage, "week", Date.now())).totals;

  beforeEach(() => {
    stores = createStores(createStorageFromUrl("memory:"));
    lines = [];
  });
  afterEach(() => stores.dispose());

  it("counts them once: a second start counts nothing again", async () => {
    await put([rec("completed", 2 * HOUR), rec("error", 3 * HOUR), rec("stopped", 50 * HOUR)]);
    await put([rec("completed", 9 * 24 * HOUR)]); // past the counters' keeping: not read
    await start();
    const want = { created: 3, completed: 1, error: 1, stopped: 1 };
    expect(await totals()).toEqual(want);
    expect(lines).toEqual([
      expect.stringContaining("stats: counting the sessions stored before"),
      expect.stringContaining("stats: counted 3 sessions stored before the counters"),
    ]);
    expect((await stores.storage.getItem<{ done: boolean }>(BACKFILL_KEY))?.done).toBe(true);
    await start();
    expect(await totals()).toEqual(want);
    expect(lines).toHaveLength(2);
  });

  it("leaves a session's end to the live counter when it ended after the counters began", async () => {
    const running = rec("running", HOUR, null);
    // Stored ended by the time the backfill reads it, but ended after the counters began.
    const lately = rec("completed", HOUR, HOUR + 60_000);
    await put([running, lately, rec("completed", HOUR)]);
    const live = await start();
    expect(await totals()).toEqual({ created: 3, completed: 1, error: 0, stopped: 0 });
    for (const r of [running, lately]) {
      live.ended({ ...r, state: "completed", ended_at: new Date().toISOString() }); // as the core does
    }
    await live.flush();
    expect(await totals()).toEqual({ created: 3, completed: 3, error: 0, stopped: 0 });
  });

  it("counts only what came before an older release's counters, to the hour", async () => {
    const hourAgo = Date.now() - HOUR;
    const h = hourAgo - (hourAgo % HOUR); // that release counted from this hour on
    const counted = rec("completed", Date.now() - h - 60_000);
    const old = createSessionStats(stores.storage, { instance: "oldrelease" });
    old.started(counted);
    old.ended(counted);
    await old.flush();
    await put([counted, rec("completed", 5 * HOUR), rec("error", 6 * HOUR)]);
    await start();
    expect(await totals()).toEqual({ created: 3, completed: 2, error: 1, stopped: 0 });
  });

  it("undoes and does again a backfill cut short", async () => {
    await put([rec("completed", 2 * HOUR), rec("error", 26 * HOUR)]);
    // What a backfill left when it stopped half-way: its marker, not done, and a document (of
    // a session that retention has removed since: no document of the redo replaces it).
    const before = Date.now();
    await stores.storage.setItem(BACKFILL_KEY, { before, done: false });
    const half = createSessionStats(stores.storage, { instance: "backfill" });
    const gone = rec("completed", 30 * HOUR);
    half.started(gone);
    half.ended(gone);
    await half.flush();
    const start0 = Date.now() - 30 * HOUR;
    expect(await stores.storage.hasItem(bucketKey("h", start0 - (start0 % HOUR), "backfill"))).toBe(
      true,
    );
    await start();
    expect(await totals()).toEqual({ created: 2, completed: 1, error: 1, stopped: 0 });
  });
});
