// The sessions list in Chromium: counts per state above it, search (session id, event id, text
// in prints and errors), a time range, and "re-run all failed" with its confirmation.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idAt } from "../src/ids.ts";
import type { ComposedService } from "../src/platform/compose.ts";
import { browserPresent, launch, shoot } from "./support/browser.ts";
import { type Shop, shopService } from "./support/shop.ts";

describe.skipIf(!browserPresent())("finding sessions in Chromium", () => {
  let hook: ComposedService;
  let base: string;
  let send: Shop["send"];
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  const ids: Record<string, string> = {};
  const failedIds: string[] = [];
  let project = "";

  const rows = () =>
    page.locator("#sessions tbody tr").evaluateAll((trs) => trs.map((tr) => tr.id.slice(4)));

  beforeAll(async () => {
    ({ hook, base, send } = await shopService());
    for (const body of ["apple", "banana", "fail", "cherry", "fail"]) {
      ids[body] = await send("orders", body);
      if (body === "fail") failedIds.push(ids[body]);
    }
    ids.refund = await send("refunds", "r");
    project = (await hook.stores.projects.byName("shop"))!.project.id;
    browser = await launch();
    page = await browser.ctx.newPage();
  }, 60_000);
  afterAll(async () => browser?.close());

  it("counts sessions per state above the list, each a link to that state", async () => {
    await page.goto(`${base}/ui/sessions?range=hour`);
    expect(await page.locator("#count-completed").textContent()).toBe("4");
    expect(await page.locator("#count-error").textContent()).toBe("2");
    expect(await page.locator("#count-running").textContent()).toBe("0");
    await page.locator("#count-error").click();
    await page.waitForURL(/state=error/);
    expect((await rows()).length).toBe(2);
  });

  it("finds a session by its id, by its event id, and by text in its prints or error", async () => {
    const search = async (q: string) => {
      await page.goto(`${base}/ui/sessions`);
      await page.fill("#f-q", q);
      await page.click("form.filters button[type=submit]");
      await page.waitForURL(/q=/);
      return rows();
    };
    expect(await search(ids.banana!)).toEqual([ids.banana]);
    const rec = (await hook.stores.sessions.get(ids.cherry!))!;
    expect(await search(rec.event_id)).toEqual([ids.cherry]);
    expect(await search("BANANA")).toEqual([ids.banana]); // a print, any case
    expect((await search("card declined")).sort()).toEqual([...failedIds].sort());
    await shoot(page, "sessions-search");
    expect(await search("no such text anywhere")).toEqual([]);
    expect(await page.locator("#no-sessions").textContent()).toBe("No session matches.");
  });

  it("limits the list to a time range, in the UI and the API", async () => {
    // A session stored two hours ago (its id carries its time).
    const at = Date.now() - 2 * 3_600_000;
    const old = `${idAt("ses", at).slice(0, -1)}1`;
    const t = new Date(at).toISOString();
    const rec = (await hook.stores.sessions.get(ids.apple!))!;
    const stored = { ...rec, id: old, created_at: t, started_at: t, ended_at: t };
    await hook.stores.sessions.put(stored, null);
    await page.goto(`${base}/ui/sessions?range=hour`);
    expect((await rows()).length).toBe(6);
    await page.goto(`${base}/ui/sessions?range=day`);
    expect((await rows()).length).toBe(7);
    const api = async (q: string) => {
      const res = await fetch(`${base}/api/v1/sessions?${q}`);
      return ((await res.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);
    };
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect(await api(`until=${hourAgo}`)).toEqual([old]);
    const recent = await api(`since=${hourAgo}`);
    expect(recent).toHaveLength(6);
    expect(recent).not.toContain(old);
  });

  it("re-runs all failed sessions of a trigger after a confirmation naming how many", async () => {
    await page.goto(`${base}/ui/sessions?project=${project}&trigger=orders&range=hour`);
    await page.click("#rerun-failed");
    await page.waitForURL(/rerun-failed/);
    expect(await page.locator("#rerun-count").textContent()).toContain(
      "2 failed sessions of shop/orders",
    );
    await shoot(page, "rerun-confirm");
    await page.click("#rerun-confirm");
    await page.locator("#rerun-done").waitFor();
    expect(await page.locator("#rerun-done").textContent()).toContain("Started 2 re-runs");
    const links = await page.locator("main ul a").allTextContents();
    // A whole re-run is a new session of the same stored event.
    const event = async (id: string) => (await hook.stores.sessions.get(id))?.event_id;
    for (const id of links) await hook.sessions.whenEnded(id);
    const rerunEvents = await Promise.all(links.map(event));
    const failedEvents = await Promise.all(failedIds.map(event));
    expect(rerunEvents.sort()).toEqual(failedEvents.sort());
    expect(links.some((id) => failedIds.includes(id))).toBe(false);
  });
});
