// One session's page in Chromium: the failure in a banner above everything else, a waterfall of
// its activities with millisecond times, and links between a session and its re-runs.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployBody } from "./support/app.ts";
import { browserPresent, launch, shoot } from "./support/browser.ts";
import { type Shop, shopService } from "./support/shop.ts";

describe.skipIf(!browserPresent())("a session's page in Chromium", () => {
  let shop: Shop;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  let slow = "";

  beforeAll(async () => {
    shop = await shopService();
    slow = await shop.send("orders", "slow");
    browser = await launch();
    page = await browser.ctx.newPage();
  }, 60_000);
  afterAll(async () => browser?.close());

  it("puts the failure in a banner at the top, above the facts and the timeline", async () => {
    await page.goto(`${shop.base}/ui/sessions/${slow}`);
    const banner = page.getByRole("alert").filter({ hasText: "card declined after reserving" });
    const bannerY = (await banner.boundingBox())!.y;
    const factsY = (await page.locator("dl.facts").boundingBox())!.y;
    const timelineY = (await page.locator("#timeline").boundingBox())!.y;
    expect(bannerY).toBeLessThan(factsY);
    expect(bannerY).toBeLessThan(timelineY);
  });

  it("draws each activity's duration as a bar in proportion, with millisecond times", async () => {
    await page.goto(`${shop.base}/ui/sessions/${slow}`);
    const acts = page.locator('#timeline li[data-kind="activity"]');
    expect(await acts.count()).toBe(2);
    const widths: number[] = [];
    const starts: number[] = [];
    for (const li of await acts.all()) {
      const bar = li.locator("svg.wf rect.wf-ok, svg.wf rect.wf-bad");
      widths.push(Number(await bar.getAttribute("width")));
      starts.push(Number(await bar.getAttribute("x")));
      expect(await li.locator("time").textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    }
    const ms = await acts.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-ms"))));
    // The bars keep the activities' ratio (150 ms : 50 ms), and the second starts after the first.
    expect(widths[0]! / widths[1]!).toBeCloseTo(ms[0]! / ms[1]!, 1);
    // Node's timers may fire up to a millisecond early by a high-resolution clock (CI once read
    // 149.86 ms for the 150 ms activity), so the floor leaves room for that and no more.
    expect(ms[0]!).toBeGreaterThan(145);
    expect(starts[1]!).toBeGreaterThan(starts[0]!);
    await shoot(page, "session-waterfall");
  });

  it("shows an activity in flight at once, its bar growing up to now, then its final row", async () => {
    const held = await shop.start("orders", "hold"); // waits before its activity
    await page.goto(`${shop.base}/ui/sessions/${held}`);
    await page.locator("[data-live-ready=true]").waitFor(); // following the stream
    const running = page.locator('#timeline li[data-kind="activity-running"]');
    const done = page.locator('#timeline li[data-kind="activity"]');
    expect([await running.count(), await done.count()]).toEqual([0, 0]);
    shop.release(); // shop.pack starts, and runs until the next release
    await running.waitFor();
    expect(await running.locator("code").textContent()).toBe("shop.pack");
    expect(await running.locator(".state-running").textContent()).toBe("running");
    expect(await running.locator("time").textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    const svg = running.locator("svg.wf");
    expect(await svg.getAttribute("data-running")).toBe("true");
    expect(await svg.locator("title").textContent()).toBe("session running: drawn up to now");
    // It ends now, and grows as now moves on: its start keeps its time, the span gets longer.
    const bar = svg.locator("rect.wf-ok");
    const x0 = Number(await bar.getAttribute("x"));
    expect(x0 + Number(await bar.getAttribute("width"))).toBeGreaterThanOrEqual(999);
    const w0 = Number(await bar.getAttribute("width"));
    const grown = `#timeline [data-kind=activity-running] rect.wf-ok:not([width="${w0}"])`;
    await page.locator(grown).waitFor(); // the page's clock ticks once a second
    expect(Number(await bar.getAttribute("width"))).toBeGreaterThan(w0);
    // A page opened while it runs shows it too: in the page as served, before any stream.
    const served = await (await fetch(`${shop.base}/ui/sessions/${held}`)).text();
    expect(served).toMatch(/<li id="in-flight-1" data-kind="activity-running">.*shop\.pack/s);
    await page.reload();
    await page.locator("[data-live-ready=true]").waitFor();
    expect(await running.count()).toBe(1);
    await shoot(page, "session-in-flight");
    shop.release(); // shop.pack ends: its final row takes the place of the one in flight
    await done.waitFor();
    expect(await running.count()).toBe(0);
    expect(await done.locator("code").textContent()).toBe("shop.pack");
    expect(await done.locator(".ok").textContent()).toBe("ok");
    shop.release();
    await shop.hook.sessions.whenEnded(held);
    await page.locator("[data-ended=true]").waitFor();
    // Ended, the page's bars span the session start to end, not marked running.
    await page.reload();
    expect(await done.count()).toBe(1);
    expect(await running.count()).toBe(0);
    expect(await done.locator("svg.wf").getAttribute("data-running")).toBeNull();
  });

  it("links a session to its re-runs and a re-run back to it", async () => {
    await page.goto(`${shop.base}/ui/sessions/${slow}`);
    await page.getByRole("button", { name: "Re-run", exact: true }).click();
    await page.waitForURL((u) => !u.pathname.endsWith(slow));
    const rerun = new URL(page.url()).pathname.split("/").at(-1)!;
    await shop.hook.sessions.whenEnded(rerun);
    await page.reload();
    const back = page.locator("#reruns a", { hasText: slow });
    expect(await back.count()).toBe(1);
    await back.click();
    await page.waitForURL((u) => u.pathname.endsWith(slow));
    expect(await page.locator("#reruns").textContent()).toContain("Re-run once:");
    expect(await page.locator("#reruns a", { hasText: rerun }).count()).toBe(1);
  });
});

describe.skipIf(!browserPresent())("Authorize with no OAuth app, in Chromium", () => {
  let shop: Shop;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  const MANIFEST = `version: v1
project:
  name: mail
  connections:
    - name: gmail_conn
      integration: gmail
  triggers:
    - { name: read, type: webhook, call: "program.py:on_read" }
`;

  beforeAll(async () => {
    shop = await shopService();
    const files = { "program.py": "def on_read(event):\n    pass\n" };
    const res = await shop.fetch("/api/v1/deploy", deployBody(MANIFEST, files));
    expect(res.status).toBe(200);
    browser = await launch();
    page = await browser.ctx.newPage();
  }, 60_000);
  afterAll(async () => browser?.close());

  it("says on the row that no OAuth app is configured and how to set one, and never dead-ends", async () => {
    await page.goto(`${shop.base}/ui/projects/mail`);
    const hint = page.locator("#oauth-hint-gmail_conn");
    const text = (await hint.textContent()) ?? "";
    expect(text).toContain("No OAuth app is configured for Google");
    expect(text).toContain("GOOGLE_CLIENT_ID");
    expect(text).toContain("GOOGLE_CLIENT_SECRET");
    expect(text).toContain("restart");
    expect(text).toContain("npx cli var set --connection mail/gmail_conn private_client_id");
    expect(text).toContain("docs/oauth.md");
    await shoot(page, "connection-hint");
    await page.locator("#authorize-gmail_conn").click();
    await page.waitForURL(/\/ui\/authorize\//);
    expect(await page.locator("h1").textContent()).toBe("OAuth app not configured");
    expect(await page.locator("link[rel=stylesheet]").count()).toBe(1);
    expect(await page.locator("#oauth-hint").textContent()).toContain("GOOGLE_CLIENT_ID");
    await shoot(page, "authorize-not-configured");
    await page.locator("#back").click();
    await page.waitForURL(/\/ui\/projects\/prj_/);
    expect(await page.locator("h1").textContent()).toBe("Project mail");
  });
});
