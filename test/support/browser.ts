// Chromium (Debian's, driven by playwright-core) for the in-process UI browser tests.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll } from "vitest";
import { repoRoot } from "./python.ts";

export const CHROMIUM = "/usr/bin/chromium";
const ARGS = `--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync`.split(/\s+/);
// HOOKLINE_UI_SHOTS=1 keeps screenshots in docs/ui/ (else a temp dir: a run leaves the checkout clean).
const keepShots = Boolean(process.env.HOOKLINE_UI_SHOTS);
const SHOTS = keepShots ? join(repoRoot, "docs/ui") : join(tmpdir(), `hookline-ui-${process.pid}`);
afterAll(() => (keepShots ? undefined : rmSync(SHOTS, { recursive: true, force: true })));

/** Whether the browser is here; CI (or HOOKLINE_BROWSER_TESTS=required) must have it. */
export function browserPresent(): boolean {
  const present = existsSync(CHROMIUM);
  const required = Boolean(process.env.CI) || process.env.HOOKLINE_BROWSER_TESTS === "required";
  if (!present && required) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return present;
}

/** A fresh browser profile, closed and removed by `close()`. */
export async function launch(js = true): Promise<{ ctx: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "hookline-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1200, height: 800 },
    javaScriptEnabled: js,
  });
  return {
    ctx,
    async close() {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Light and dark screenshots of the page, `<name>-<scheme>.png`; the page is left in light. */
export async function shoot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  for (const scheme of ["dark", "light"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: join(SHOTS, `${name}-${scheme}.png`), fullPage: true });
  }
  return join(SHOTS, `${name}-light.png`);
}
