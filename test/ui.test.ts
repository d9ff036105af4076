// The web UI in a real Chromium (Debian's, driven by playwright-core) against the real service.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployProject } from "../src/cli/deploy.ts";
import { browserPresent, CHROMIUM, launch, shoot } from "./support/browser.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";

const present = browserPresent();
if (!present) {
  const why = `${CHROMIUM} is missing: install it with "apt-get install -y chromium"`;
  console.warn(`\n*** SKIPPING the web UI browser tests: ${why} ***\n`);
}

const post = (url: string, body: string, type = "application/json") =>
  fetch(url, { method: "POST", headers: { "content-type": type }, body });
/** The session id a 202 names. */
const sessionOf = async (res: Promise<Response>) =>
  ((await (await res).json()) as { session_id: string }).session_id;

/** A handler that prints, waits in an activity, prints again: long enough to watch live. */
const SLOW_MANIFEST = `version: v2
project: { name: slow }
triggers:
  - { name: slow, type: webhook, call: "handlers.py:on_slow" }
  - { name: fail, type: webhook, call: "handlers.py:on_fail", reuse_process: true }
  - { name: answer_then_wait, type: webhook, call: "handlers.py:on_answer", is_sync: true }
  - { name: new_year, schedule: "0 3 1 1 *", timezone: Europe/Paris, call: "handlers.py:on_slow" }
`;
const SLOW_PY = `import time
import workflow_sdk

def on_slow(event):
    seconds = (event.data.body.json or {}).get("seconds", 1)
    print("before the wait")
    time.sleep(seconds)
    print("after the wait")

def on_fail(event):
    raise ValueError("<b>bad</b> input")

def on_answer(event):
    time.sleep(3)
    workflow_sdk.http_outcome(status_code=201, json={"answered": True})
    time.sleep(120)

def on_manual(event):
    print(f"by hand for {event.data['who']}, {event.event_type}")
`;

describe.skipIf(!present)("web UI in Chromium (dev mode)", () => {
  const emu = useEmulator();
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  let hooks: Record<string, string> = {};
  beforeAll(async () => {
    browser = await launch();
    page = await browser.ctx.newPage();
    const slow = join(emu.dataHome, "slow"); // removed with the data home
    mkdirSync(slow);
    writeFileSync(join(slow, "manifest.yaml"), SLOW_MANIFEST);
    writeFileSync(join(slow, "handlers.py"), SLOW_PY);
    hooks = {
      ...(await emu.deploy(join(repoRoot, "examples/hello"))),
      ...(await emu.deploy(join(repoRoot, "examples/sync-echo"))),
      ...(await emu.deploy(slow)),
    };
  }, 180_000);
  afterAll(async () => browser?.close());

  it("shows a webhook's session appear and complete live, then its prints", async () => {
    await page.goto(`${emu.url}/ui/sessions`);
    await page.locator("#sessions[data-live-ready]").waitFor();
    // A mark on the window: it survives only if the page was never reloaded.
    await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
    const id = await sessionOf(post(hooks.hello!, JSON.stringify({ name: "Browser" })));
    const row = page.locator(`#row-${id}`);
    await row.locator(".state-completed").waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (globalThis as { stillHere?: boolean }).stillHere)).toBe(true);
    await shoot(page, "sessions");

    await row.getByRole("link", { name: id }).click();
    await page.waitForURL(`**/ui/sessions/${id}`);
    const timeline = await page.getByRole("list", { name: "Timeline" }).textContent();
    expect(timeline).toContain("Hello, Browser!");
    // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    await page.keyboard.press("Tab");
    await expect(page.locator(":focus").textContent()).resolves.toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.locator("main:focus").count()).toBe(1);
    await expect(page.locator("#event-body").textContent()).resolves.toContain('"name": "Browser"');
  });

  it("shows a sync session's outcome, and re-runs it as a new session", async () => {
    const res = await post(hooks.echo!, JSON.stringify({ message: "hi there" }));
    expect(res.status).toBe(200);
    type List = { sessions: { id: string }[] };
    const id = (await emu.api<List>("/sessions?project=sync_echo&limit=1")).sessions[0]!.id;
    await page.goto(`${emu.url}/ui/sessions/${id}`);
    await expect(page.locator("#outcome-status").textContent()).resolves.toBe("200");
    await expect(page.locator("#outcome-body").textContent()).resolves.toContain(
      '"echo": "hi there"',
    );
    await shoot(page, "session");

    await page.getByRole("button", { name: "Re-run" }).click();
    await page.waitForURL(
      (url) => /\/ui\/sessions\/ses_/.test(url.pathname) && !url.pathname.endsWith(id),
    );
    expect((await emu.ended(page.url().split("/").at(-1)!)).state).toBe("completed");
    await page.reload();
    await expect(page.locator("#outcome-body").textContent()).resolves.toContain(
      '"echo": "hi there"',
    );
  });

  it("follows a running session live, and stops one", async () => {
    const id = await sessionOf(post(hooks.slow!, '{"seconds": 3}'));
    await page.goto(`${emu.url}/ui/sessions/${id}`);
    await page.locator("main[data-live-ready]").waitFor();
    // time.sleep runs as an activity: its row in flight, running (the runner tells it at 50 ms),
    // then its final row in its place.
    const running = page.locator('#timeline li[data-kind="activity-running"]');
    await running.waitFor();
    expect(await running.locator("code").textContent()).toBe("time.sleep");
    await page.locator("main[data-ended]").waitFor({ timeout: 20_000 });
    expect(await running.count()).toBe(0);
    const slept = page.locator('#timeline li[data-kind="activity"]', { hasText: "time.sleep" });
    expect(await slept.locator(".ok").textContent()).toBe("ok");
    const timeline = await page.getByRole("list", { name: "Timeline" }).textContent();
    expect(timeline).toContain("after the wait");
    await expect(page.locator("#session-status .state").textContent()).resolves.toBe("completed");
    // Made after the end, the page says so itself: nothing will come over a stream.
    await page.reload();
    expect(await page.locator("main[data-ended=true]:not([data-live-session])").count()).toBe(1);

    // A synchronous session answers mid-run: its outcome shows while it still runs; then stop it.
    await page.goto(`${emu.url}/ui/sessions?project=slow&trigger=answer_then_wait`);
    await page.locator("#sessions[data-live-ready]").waitFor();
    const response = post(hooks.answer_then_wait!, "{}");
    await page.locator("#sessions tbody tr[data-state=running] a").first().click();
    await page.locator("main[data-live-ready]").waitFor();
    // Rendered before the answer (3 s of room): the outcome below arrives over the stream.
    expect(await page.locator("#outcome-status").count()).toBe(0);
    await page.locator("#outcome-status").waitFor({ timeout: 20_000 });
    await expect(page.locator("#outcome-status").textContent()).resolves.toBe("201");
    expect((await response).status).toBe(201);
    expect(await page.locator("main[data-ended]").count()).toBe(0);
    await page.getByRole("button", { name: "Stop" }).click();
    await expect(page.locator("#session-status .state").textContent()).resolves.toBe("stopped");
  });

  it("shows a project's vars by name, never a secret's value", async () => {
    const secret = "sk-live-do-not-show-0451";
    await emu.api("/envs/hello/vars/API_KEY", {
      method: "PUT",
      body: JSON.stringify({ value: secret, secret: true }),
    });
    await page.goto(`${emu.url}/ui/projects`);
    await page.getByRole("link", { name: "hello", exact: true }).click();
    const vars = await page.getByRole("table", { name: "Vars" }).textContent();
    expect(vars).toMatch(/GREETING\s*Hello\s*manifest\s*—\s*API_KEY\s*secret \(not shown\)/);
    expect(await page.content()).not.toContain(secret);
    await shoot(page, "project");
    await page.getByRole("button", { name: "Copy the webhook URL of hello" }).click();
    const copied = page.getByRole("status").filter({ hasText: `Copied ${hooks.hello}` });
    await copied.waitFor({ state: "attached" }); // the clipboard answers asynchronously
  });

  it("runs a function by hand from the project's Run form and opens its session", async () => {
    await page.goto(`${emu.url}/ui/projects`);
    await page.getByRole("link", { name: "slow", exact: true }).click();
    const form = page.getByRole("form", { name: "Run" });
    await form.getByLabel("Function").selectOption("handlers.py:on_manual");
    await form.getByLabel("Inputs, a JSON object").fill('{"who": "Ada"}');
    await form.getByRole("button", { name: "Run" }).click();
    await page.waitForURL(/\/ui\/sessions\/ses_/);
    // The page says the session ended: heard over its stream, or made after the end (a print
    // can be done before a loaded browser asks for the page). When that does not come, say
    // what the page and the API saw.
    const id = new URL(page.url()).pathname.split("/").at(-1)!;
    await page
      .locator("main[data-ended]")
      .waitFor({ timeout: 60_000 })
      .catch(async (e: Error) => {
        const api = await (await fetch(`${emu.url}/api/v1/sessions/${id}`)).text();
        const status = await page.locator("#session-status").textContent();
        throw new Error(`${e.message}; page status: ${status}; API: ${api.slice(0, 500)}`);
      });
    const timeline = await page.getByRole("list", { name: "Timeline" }).textContent();
    expect(timeline).toContain("by hand for Ada, manual");
    await expect(page.locator("#started-by-hand").textContent()).resolves.toContain("by hand");
    await expect(page.locator("#event-inputs").textContent()).resolves.toContain('"who": "Ada"');
  }, 90_000);

  it("shows a trigger's kind and schedule, sends a test request from its page and links its session", async () => {
    await page.goto(`${emu.url}/ui/projects`);
    // The kind, in the project's table and on the trigger's page: "reuse process" where set.
    await page.getByRole("link", { name: "slow", exact: true }).click();
    const triggers = page.getByRole("table", { name: "Triggers" });
    const kind = (name: string) =>
      triggers
        .locator("tr", { has: page.getByRole("link", { name, exact: true }) })
        .locator("td")
        .nth(3)
        .textContent();
    await expect(kind("fail")).resolves.toBe("async, not durable, reuse process");
    await expect(kind("slow")).resolves.toBe("async, not durable");
    // A schedule trigger shows its schedule and next firing (UTC: 03:00 in Paris in winter), no
    // webhook URL, and its page no test request form.
    const newYear = triggers.locator("tr", { has: page.getByRole("link", { name: "new_year" }) });
    await expect(newYear.locator("td").nth(1).textContent()).resolves.toMatch(
      /^schedule 0 3 1 1 \* \(Europe\/Paris\), next \d{4}-01-01 02:00:00 UTC$/,
    );
    expect(await newYear.locator("input.url").count()).toBe(0);
    await triggers.getByRole("link", { name: "new_year" }).click();
    await page.waitForURL("**/triggers/new_year");
    expect(await page.getByRole("button", { name: "Send" }).count()).toBe(0);
    expect(await page.locator("#no-test").allTextContents()).toEqual([
      "A schedule trigger has no webhook URL to send a test request to: it starts on its schedule.",
    ]);
    await page.goBack();
    await triggers.getByRole("link", { name: "fail", exact: true }).click();
    await expect(page.locator("dl.facts dt:text-is('Kind') + dd").textContent()).resolves.toBe(
      "async, not durable, reuse process",
    );
    await page.goto(`${emu.url}/ui/projects`);
    await page.getByRole("link", { name: "sync_echo" }).click();
    await expect(page.locator("input.url").first().inputValue()).resolves.toBe(hooks.echo);
    await page.getByRole("link", { name: "echo" }).first().click();
    await page.getByLabel("Body").fill('{"message": "from the UI"}');
    await page.getByRole("button", { name: "Send" }).click();
    await expect(page.locator("#response").textContent()).resolves.toContain("200");
    await expect(page.locator("#test-result").textContent()).resolves.toContain("from the UI");
    await shoot(page, "trigger");
    await page.locator("#test-session").click();
    await expect(page.locator("#session-status .state").textContent()).resolves.toBe("completed");
  });

  it("shows a <script> body as text and never runs it", async () => {
    const body = '<script>window.pwned = true</script><img src=x onerror="window.pwned=true">';
    const id = await sessionOf(post(hooks.hello!, body, "text/plain"));
    await emu.ended(id);
    await page.goto(`${emu.url}/ui/sessions/${id}`);
    await expect(page.locator("#event-body").textContent()).resolves.toBe(body);
    await expect(page.getByRole("list", { name: "Timeline" }).textContent()).resolves.toContain(
      "<script>window.pwned",
    );
    expect(await page.evaluate(() => (globalThis as { pwned?: boolean }).pwned)).toBeUndefined();
  });

  it("shows a failed session's error with its traceback", async () => {
    const id = await sessionOf(post(hooks.fail!, "{}"));
    expect((await emu.ended(id)).state).toBe("error");
    await page.goto(`${emu.url}/ui/sessions/${id}`);
    const error = page.getByRole("region", { name: "Error" });
    await expect(error.textContent()).resolves.toContain("ValueError: <b>bad</b> input");
    await expect(error.locator("pre").textContent()).resolves.toContain("Traceback");
  });

  it("re-runs from the CLI: cli session rerun <id>", async () => {
    const id = await sessionOf(post(hooks.hello!, "{}"));
    await emu.ended(id);
    const r = await execa("node", [join(repoRoot, "bin/cli.mjs"), "session", "rerun", id], {
      env: { SVC_URL: emu.url, SVC_API_TOKEN: "", XDG_CONFIG_HOME: join(emu.dataHome, "c") },
      reject: false,
    });
    expect(r.stderr).toBe("");
    const again = /^session (ses_[0-9a-z]{26}): \w+ \(re-run of (ses_\w+)\)$/.exec(r.stdout);
    expect(again?.[2]).toBe(id);
    expect((await emu.ended(again![1]!)).state).toBe("completed");
  });
});

describe.skipIf(!present)("web UI in Chromium (prod mode, JavaScript off)", () => {
  const token = "ui-test-token-0123456789";
  let emu: Awaited<ReturnType<typeof startQuietEmulator>>;
  let browser: Awaited<ReturnType<typeof launch>>;
  beforeAll(async () => {
    emu = await startQuietEmulator(await testPython(), { mode: "prod", apiToken: token });
    browser = await launch(false);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await emu?.emulator.close();
    if (emu) rmSync(emu.dataHome, { recursive: true, force: true });
  });

  it("asks for the token, then shows the pages", async () => {
    const page = await browser.ctx.newPage();
    await page.goto(`${emu.emulator.url}/ui/projects`);
    await page.waitForURL("**/ui/sign-in?next=*");
    await shoot(page, "sign-in");
    await page.getByLabel("API token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("not the API token");
    await page.getByLabel("API token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/ui/projects");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Projects");
    expect(await page.content()).not.toContain(token);
    // Pages read, and forms work, without JavaScript.
    const env = { SVC_URL: emu.emulator.url, SVC_API_TOKEN: token };
    const { io, out } = fakeIo({ env });
    await deployProject(io, { manifest: join(repoRoot, "examples/hello/manifest.yaml") });
    const path = /webhook path is "([^"]+)"/.exec(out.join("\n"))![1]!;
    const id = await sessionOf(post(emu.emulator.url + path, '{"name": "NoJS"}'));
    const watch = `${emu.emulator.url}/api/v1/sessions/${id}/watch`;
    await (await fetch(watch, { headers: { authorization: `Bearer ${token}` } })).text();
    await page.getByRole("link", { name: "Sessions" }).click();
    await page.getByRole("link", { name: id }).click();
    await expect(page.getByRole("list", { name: "Timeline" }).textContent()).resolves.toContain(
      "Hello, NoJS!",
    );
    await page.getByRole("button", { name: "Re-run" }).click();
    await page.waitForURL(
      (url) => url.pathname.startsWith("/ui/sessions/ses_") && !url.pathname.endsWith(id),
    );
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL("**/ui/sign-in");
    await page.goto(`${emu.emulator.url}/ui/sessions`);
    await page.waitForURL("**/ui/sign-in?next=*");
  });
});
