// The overview page in Chromium against the service in process (fake runtime, no Python): its
// chart and figures equal the stored sessions of a known set, the range changes them, it is live.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/ids.ts";
import type { SessionRecord, SessionState } from "../src/model/records.ts";
import type { ComposedService } from "../src/platform/compose.ts";
import { browserPresent, launch, shoot } from "./support/browser.ts";
import { sessionRecord } from "./support/records.ts";
import { type Shop, shopService } from "./support/shop.ts";

const HOUR = 3_600_000;

describe.skipIf(!browserPresent())("the overview in Chromium", () => {
  let hook: ComposedService;
  let base: string;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  let send: Shop["send"];

  /** A session that ended `ago` ms before now, stored and counted as the service counts it. */
  const past = async (state: SessionState, ago: number, trigger = "orders") => {
    const doc = (await hook.stores.projects.byName("shop"))!;
    const t = new Date(Date.now() - ago).toISOString();
    const rec = sessionRecord({
      id: newId("ses"),
      project_id: doc.project.id,
      project_name: "shop",
      trigger_name: trigger,
      state,
      error: state === "error" ? { message: "old failure" } : null,
      created_at: t,
      started_at: t,
      ended_at: t,
      updated_at: t,
    });
    await hook.stores.sessions.put(rec, null);
    hook.stats.started(rec);
    hook.stats.ended(rec);
  };

  /** The stored sessions that ended in the range, by state: what the page must say. */
  const storedCounts = async (sinceMs: number) => {
    const all = await hook.stores.sessions.list({ limit: 10_000 });
    const out = { completed: 0, error: 0, stopped: 0 };
    for (const r of all as SessionRecord[]) {
      const end = Date.parse(r.ended_at ?? "");
      if (r.state in out && end >= sinceMs) out[r.state as keyof typeof out]++;
    }
    return out;
  };

  /** What the page shows: the figures and the chart's bars added up. */
  const shown = async () => {
    const num = async (id: string) => Number(await page.locator(`#${id}`).textContent());
    const bars = { completed: 0, error: 0, stopped: 0 };
    const gs = await page.locator("svg.chart g.bar").all();
    for (const g of gs) {
      for (const s of ["completed", "error", "stopped"] as const) {
        bars[s] += Number(await g.getAttribute(`data-${s}`));
      }
    }
    const figures = {
      completed: await num("total-completed"),
      error: await num("total-error"),
      stopped: await num("total-stopped"),
    };
    return { figures, bars, count: gs.length };
  };

  beforeAll(async () => {
    ({ hook, base, send } = await shopService());
    // Now: 3 completed orders, 2 failed, 1 refund.
    for (const body of ["a", "b", "fail", "c", "fail"]) await send("orders", body);
    await send("refunds", "r");
    // Two hours ago: 2 completed, 1 error (a day sees them, an hour does not); three days ago:
    // 4 completed and 1 stopped (only the week sees them).
    await past("completed", 2 * HOUR);
    await past("completed", 2 * HOUR, "refunds");
    await past("error", 2 * HOUR);
    for (let i = 0; i < 4; i++) await past("completed", 72 * HOUR);
    await past("stopped", 72 * HOUR);
    browser = await launch();
    page = await browser.ctx.newPage();
  }, 60_000);
  afterAll(async () => browser?.close());

  it("shows the stored sessions' counts for each range, in figures and in the chart", async () => {
    const cases = [
      {
        range: "hour",
        since: Date.now() - HOUR,
        bars: 60,
        want: { completed: 4, error: 2, stopped: 0 },
      },
      {
        range: "day",
        since: Date.now() - 24 * HOUR,
        bars: 24,
        want: { completed: 6, error: 3, stopped: 0 },
      },
      {
        range: "week",
        since: Date.now() - 7 * 24 * HOUR,
        bars: 168,
        want: { completed: 10, error: 3, stopped: 1 },
      },
    ];
    for (const c of cases) {
      await page.goto(`${base}/ui?range=${c.range}`);
      const s = await shown();
      const stored = await storedCounts(c.since);
      expect(stored, c.range).toEqual(c.want);
      expect(s.figures, c.range).toEqual(stored);
      expect(s.bars, c.range).toEqual(stored);
      expect(s.count, c.range).toBe(c.bars);
      if (c.range === "day") await shoot(page, "overview");
    }
  });

  it("shows each trigger's failure rate and the latest errors, linked", async () => {
    await page.goto(`${base}/ui?range=hour`);
    const orders = page.locator('tr[data-trigger="shop/orders"]');
    await expect.poll(() => orders.locator("td.ended").textContent()).toBe("5");
    expect(await orders.locator("td.failure").textContent()).toBe("40%");
    expect(await page.locator('tr[data-trigger="shop/refunds"] td.failure').textContent()).toBe(
      "0%",
    );
    const errors = page.locator("#errors tbody tr");
    expect(await errors.count()).toBe(2);
    expect(await errors.first().textContent()).toContain("card declined");
    await errors.first().locator("a").click();
    await page.waitForURL(/\/ui\/sessions\/ses_/);
    expect(await page.locator("h1").textContent()).toContain("ses_");
  });

  it("shows each trigger's health on its project's and its own page, over the range", async () => {
    const id = (await hook.stores.projects.byName("shop"))!.project.id;
    await page.goto(`${base}/ui/projects/${id}?range=hour`);
    const orders = page.locator('#health-table tr[data-health="orders"]');
    expect(await orders.locator("td.ended").textContent()).toBe("5");
    expect(await orders.locator("td.success").textContent()).toBe("60%");
    expect(await orders.locator("a.bad").textContent()).toBe("card declined");
    await shoot(page, "project-health");
    // A week: 12 ended orders, 8 completed.
    await page.goto(`${base}/ui/projects/${id}/triggers/orders?range=week`);
    const row = page.locator('#health-table tr[data-health="orders"]');
    expect(await row.locator("td.ended").textContent()).toBe("12");
    expect(await row.locator("td.success").textContent()).toBe("66.7%");
  });

  it("follows new sessions live, without a reload", async () => {
    await page.goto(`${base}/ui?range=hour`);
    await page.locator("main[data-live-ready]").waitFor();
    await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
    const before = Number(await page.locator("#total-completed").textContent());
    await send("refunds", "live");
    await expect
      .poll(() => page.locator("#total-completed").textContent(), { timeout: 10_000 })
      .toBe(String(before + 1));
    expect(await page.evaluate(() => (globalThis as { stillHere?: boolean }).stillHere)).toBe(true);
  });

  it("reads without JavaScript: the chart is SVG in the page", async () => {
    const html = await (await fetch(`${base}/ui?range=day`)).text();
    expect(html).toContain('<svg class="chart"');
    expect(html).toMatch(/data-completed="2" data-error="1" data-stopped="0"/);
    const bad = await fetch(`${base}/ui?range=year`);
    expect(bad.status).toBe(400);
  });
});
