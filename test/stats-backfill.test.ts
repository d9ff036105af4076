// A data home upgraded from a release without the overview's counters: sessions stored
// directly (records, index, logs; no counter), then the service started on it. Its overview
// counts them, from a backfill run once in the background at the start.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveSettings } from "../src/config.ts";
import { idAt } from "../src/ids.ts";
import type { SessionState } from "../src/model/records.ts";
import { type Service, startService } from "../src/platform/node.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { openFormat } from "../src/storage/format.ts";
import { createStores } from "../src/storage/records.ts";
import { sessionRecord } from "./support/records.ts";
import { until } from "./support/until.ts";

const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), "hookline-stats-backfill-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A session of shop/orders that ran `ago` ms before now, as an older release stored it. */
function stored(state: SessionState, ago: number, n: number) {
  const at = Date.now() - ago;
  const t = new Date(at).toISOString();
  const id = `${idAt("ses", at).slice(0, -4)}${String(n).padStart(4, "0")}`;
  const record = sessionRecord({
    id,
    project_id: "prj_00000000000000000000000000",
    project_name: "shop",
    trigger_name: "orders",
    event_id: `evt_${id.slice(4)}`,
    state,
    error: state === "error" ? { message: "card declined" } : null,
    created_at: t,
    started_at: t,
    ended_at: new Date(at + 20).toISOString(),
    updated_at: t,
  });
  return { id, change: { record, was: null } };
}

/** The overview's figures over HTTP, read from the page's `#total-<state>` cells. */
async function figures(svc: Service, range: string) {
  const html = await (await fetch(`${svc.url}/ui?range=${range}`)).text();
  const num = (s: string) => Number(new RegExp(`id="total-${s}"[^>]*>([0-9,]+)<`).exec(html)?.[1]);
  return { completed: num("completed"), error: num("error"), stopped: num("stopped") };
}

describe("the overview of a data home stored before the counters", () => {
  it("counts the stored sessions after a start, once", async () => {
    const url = `lmdb:${join(dir, "db")}`;
    const storage = createStorageFromUrl(url);
    await openFormat(storage);
    const stores = createStores(storage);
    await stores.sessions.commitMany([
      stored("completed", 2 * HOUR, 1),
      stored("completed", 2 * HOUR, 2),
      stored("completed", 2 * HOUR, 3),
      stored("error", 2 * HOUR, 4),
      stored("completed", 72 * HOUR, 5),
      stored("completed", 72 * HOUR, 6),
      stored("stopped", 72 * HOUR, 7),
      stored("completed", 10 * 24 * HOUR, 8), // past a week: not shown, not read
    ]);
    expect(await storage.getKeys("stats")).toEqual([]);
    await stores.dispose();

    const lines: string[] = [];
    const settings = resolveSettings(
      { mode: "dev", port: 0, dataHome: dir, configHome: join(dir, "config"), storage: url },
      {},
    );
    const python = () => Promise.reject(new Error("no Python in this test"));
    const svc = await startService(settings, { log: (l) => lines.push(l), python });
    try {
      const week = { completed: 5, error: 1, stopped: 1 };
      await until("the backfill's counts", async () => {
        const f = await figures(svc, "week");
        return f.completed + f.error + f.stopped === 7 && f;
      });
      expect(await figures(svc, "week")).toEqual(week);
      expect(await figures(svc, "day")).toEqual({ completed: 3, error: 1, stopped: 0 });
      expect(await figures(svc, "hour")).toEqual({ completed: 0, error: 0, stopped: 0 });
      expect(
        lines.filter((l) => l.includes("stats: counted 7 sessions stored before")),
      ).toHaveLength(1);
    } finally {
      await svc.close();
    }
  }, 120_000);
});
