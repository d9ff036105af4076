// The settings page in Chromium: how the service runs, which OAuth apps it has (names, never a
// value), which pre-installed packages are missing and why.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserPresent, launch, shoot } from "./support/browser.ts";
import { type Shop, shopService } from "./support/shop.ts";

const SECRET = "google-secret-value-never-on-a-page";

describe.skipIf(!browserPresent())("the settings page in Chromium", () => {
  let shop: Shop;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  const venvDir = mkdtempSync(join(tmpdir(), "hookline-venv-"));

  beforeAll(async () => {
    writeFileSync(
      join(venvDir, ".hookline.json"),
      JSON.stringify({ sdk: "x", source: "y", preinstall_missing: ["slack-sdk", "pygithub"] }),
    );
    shop = await shopService({
      oauthSettings: { GOOGLE_CLIENT_ID: "google-id", GOOGLE_CLIENT_SECRET: SECRET },
      host: {
        mode: "dev",
        storage: "lmdb  /data/hookline/db",
        dataHome: "/data/hookline",
        python: "/data/hookline/venv (made at the first deploy)",
        venvDir,
      },
    });
    browser = await launch();
    page = await browser.ctx.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(venvDir, { recursive: true, force: true });
  });

  it("shows version, mode, storage, data home, Python, OAuth apps and missing packages", async () => {
    await page.goto(`${shop.base}/ui`);
    await page.getByRole("link", { name: "Settings" }).click();
    await page.waitForURL(/\/ui\/settings$/);
    expect(await page.locator("#version").textContent()).toMatch(/^hookline \d+\.\d+\.\d+/);
    expect(await page.locator("#mode").textContent()).toContain("dev");
    expect(await page.locator("#storage").textContent()).toBe("lmdb  /data/hookline/db");
    expect(await page.locator("#data-home").textContent()).toBe("/data/hookline");
    expect(await page.locator("#python").textContent()).toContain("/data/hookline/venv");
    const google = page.locator('#oauth-apps tr[data-provider="Google"] td').nth(2);
    expect(await google.textContent()).toBe("yes");
    const slack = page.locator('#oauth-apps tr[data-provider="Slack"] td').nth(2);
    expect(await slack.textContent()).toBe("no");
    const missing = await page.locator("#missing-packages tbody tr td.mono").allTextContents();
    expect(missing).toEqual(["slack-sdk", "pygithub"]);
    expect(await page.locator("#missing-packages").textContent()).toContain(
      "pip could not install",
    );
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.content()).not.toContain("google-id");
    await shoot(page, "settings");
  });
});
