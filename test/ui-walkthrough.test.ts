// The issue's "done means", walked as a new user would, in Chromium against a fresh service with
// real Python: deploy examples/hello with the CLI, send the README's webhook with curl, open `/`
// and see the session counted; then a project whose payments fail: find a failed session by a
// word of its error, deploy the fix, re-run all failed of its trigger, and read the waterfall.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployProject } from "../src/cli/deploy.ts";
import { browserPresent, launch, shoot } from "./support/browser.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { repoRoot } from "./support/python.ts";

/** A checkout whose payment gateway is down until a redeploy says it is up. */
const manifest = (gateway: "down" | "up") => `version: v2
project:
  name: checkout
vars:
  - name: GATEWAY
    value: ${gateway}
triggers:
  - name: pay
    type: webhook
    event_type: post
    call: handlers.py:on_pay
`;
const HANDLERS = `import os
import time

import workflow_sdk


@workflow_sdk.activity
def reserve(item):
    time.sleep(0.06)
    return f"reserved {item}"


@workflow_sdk.activity
def charge(amount):
    time.sleep(0.02)
    if os.environ["GATEWAY"] == "down":
        raise ConnectionError("payment gateway unreachable")
    return f"charged {amount}"


def on_pay(event):
    order = event.data.body.json or {}
    print(reserve(order.get("item", "book")))
    print(charge(order.get("amount", 1)))
`;

describe.skipIf(!browserPresent())("the walk-through of a new user, in Chromium", () => {
  const emu = useEmulator();
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  let checkout = "";
  let pay = "";
  const failed: string[] = [];

  const rows = () =>
    page.locator("#sessions tbody tr").evaluateAll((trs) => trs.map((tr) => tr.id.slice(4)));
  const deploy = async (manifestPath: string) => {
    const { io, out } = fakeIo({ env: { SVC_URL: emu.url } });
    await deployProject(io, { manifest: manifestPath });
    return out;
  };

  beforeAll(async () => {
    browser = await launch();
    page = await browser.ctx.newPage();
    checkout = join(emu.dataHome, "checkout"); // removed with the data home
    mkdirSync(checkout);
    writeFileSync(join(checkout, "manifest.yaml"), manifest("down"));
    writeFileSync(join(checkout, "handlers.py"), HANDLERS);
  }, 60_000);
  afterAll(async () => browser?.close());

  it("deploys hello, sends the README's webhook with curl, and sees it counted on /", async () => {
    const out = await deploy(join(repoRoot, "examples/hello/manifest.yaml"));
    const path = /webhook path is "([^"]+)"/.exec(out.join("\n"))![1]!;
    // README: curl -X POST <webhook URL> -d '{"name":"Ada"}'
    const curl = await execa("curl", ["-sS", "-X", "POST", emu.url + path, "-d", '{"name":"Ada"}']);
    const { session_id } = JSON.parse(curl.stdout) as { session_id: string };
    expect((await emu.ended(session_id)).state).toBe("completed");
    expect(await emu.prints(session_id)).toContain("Hello, Ada!");

    await page.goto(`${emu.url}/`);
    expect(new URL(page.url()).pathname).toBe("/ui");
    expect(await page.locator("#total-completed").textContent()).toBe("1");
    const row = page.locator('#triggers tr[data-trigger="hello/hello"]');
    expect(await row.locator("td.ended").textContent()).toBe("1");
    // The projects, and hello's deploys: the pages a deploy leads to.
    await page.getByRole("link", { name: "Projects" }).click();
    expect(await page.locator("main").textContent()).toContain("hello");
    await shoot(page, "projects");
    await page.goto(`${emu.url}/ui/projects/hello/deploy`);
    expect(await page.locator("main").textContent()).toContain("dep_");
    await shoot(page, "deploys");
    await page.goto(`${emu.url}/`);
    await row.locator("a", { hasText: "(completed)" }).click();
    await page.waitForURL(`**/ui/sessions/${session_id}`);
    expect(await page.locator("#timeline").textContent()).toContain("Hello, Ada!");
  });

  it("finds the failed sessions of a second project by a word of their error", async () => {
    const out = await deploy(join(checkout, "manifest.yaml"));
    pay = emu.url + /webhook path is "([^"]+)"/.exec(out.join("\n"))![1]!;
    for (const item of ["book", "lamp"]) {
      const body = JSON.stringify({ item, amount: 12 });
      const res = await fetch(pay, { method: "POST", body });
      const { session_id } = (await res.json()) as { session_id: string };
      expect((await emu.ended(session_id)).state).toBe("error");
      failed.push(session_id);
    }
    await page.goto(`${emu.url}/`);
    expect(await page.locator("#total-error").textContent()).toBe("2");
    const row = page.locator('#triggers tr[data-trigger="checkout/pay"]');
    expect(await row.locator("td.failure").textContent()).toBe("100%");
    await shoot(page, "walkthrough-overview");

    await page.getByRole("link", { name: "Sessions" }).click();
    await page.fill("#f-q", "unreachable");
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/q=unreachable/);
    expect((await rows()).sort()).toEqual([...failed].sort());
    await shoot(page, "walkthrough-search");
  });

  it("re-runs all failed of the trigger once the fix is deployed, and reads the waterfall", async () => {
    writeFileSync(join(checkout, "manifest.yaml"), manifest("up"));
    expect((await deploy(join(checkout, "manifest.yaml"))).join("\n")).toContain("GATEWAY");
    // The failed session first: its error in the banner, its activities as bars.
    await page.goto(`${emu.url}/ui/sessions/${failed[0]}`);
    const banner = page.getByRole("alert").filter({ hasText: "payment gateway unreachable" });
    expect(await banner.count()).toBe(1);
    const acts = page.locator('#timeline li[data-kind="activity"]');
    expect(await acts.locator("code").allTextContents()).toEqual([
      "handlers.reserve",
      "handlers.charge",
    ]);
    expect(await acts.nth(1).locator(".bad").first().textContent()).toBe("error");

    // Re-run all failed of checkout/pay, from the trigger's filter of the list.
    const project = page.locator("dl.facts a", { hasText: "checkout" });
    const projectId = new URL((await project.getAttribute("href"))!, emu.url).pathname
      .split("/")
      .at(-1)!;
    await page.goto(`${emu.url}/ui/sessions?project=${projectId}&trigger=pay&range=hour`);
    await page.click("#rerun-failed");
    await page.waitForURL(/rerun-failed/);
    expect(await page.locator("#rerun-count").textContent()).toContain(
      "2 failed sessions of checkout/pay",
    );
    await page.click("#rerun-confirm");
    await page.locator("#rerun-done").waitFor();
    expect(await page.locator("#rerun-done").textContent()).toContain("Started 2 re-runs");
    await shoot(page, "rerun-done");
    const reruns = await page.locator("main ul a").allTextContents();
    for (const id of reruns) expect((await emu.ended(id)).state).toBe("completed");

    // A re-run's page: what it re-runs, and its waterfall of the two activities, both ok.
    await page.goto(`${emu.url}/ui/sessions/${reruns[0]}`);
    expect(await page.locator("#session-status .state").first().textContent()).toBe("completed");
    expect(await page.getByRole("alert").count()).toBe(0);
    const done = page.locator('#timeline li[data-kind="activity"]');
    expect(await done.count()).toBe(2);
    for (const li of await done.all()) {
      expect(await li.locator("time").textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
      expect(await li.locator(".ok").textContent()).toBe("ok");
      expect(Number(await li.locator("svg.wf rect.wf-ok").getAttribute("width"))).toBeGreaterThan(
        0,
      );
    }
    const ms = await done.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-ms"))));
    expect(ms[0]!).toBeGreaterThan(55); // reserve sleeps 60 ms
    expect(await page.locator("#timeline").textContent()).toContain("charged 12");
    await shoot(page, "walkthrough-rerun");
  });
});
