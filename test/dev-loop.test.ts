import { mkdtempSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/ids.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { startCli as spawnCli, stop, stopAll } from "./support/cli-process.ts";
import { useEmulator } from "./support/emulator.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { sessionRecord } from "./support/records.ts";

/**
 * The developer loop as a user runs it, `node bin/cli.mjs` as a process: `cli up --watch` and
 * `cli dev` redeploying on save, with real Python behind real HTTP; `session prints --follow`;
 * `session list`'s notice of rows left out; a closed output pipe.
 */

let home: string;
let python: string;

beforeAll(async () => {
  python = await testPython();
  home = await mkdtemp(join(tmpdir(), "hookline-dev-loop-"));
}, 180_000);

afterEach(stopAll);

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** `cli …` on a data home of its own, with the tests' Python and memory storage. */
const startCli = (args: string[], cwd?: string) =>
  spawnCli(
    args,
    {
      XDG_DATA_HOME: join(home, "data"),
      XDG_CONFIG_HOME: join(home, "config"),
      SVC_WORKER_PYTHON: python,
      SVC_STORAGE: "memory:",
    },
    cwd,
  );

/** POSTs `{"message": …}` to the echo webhook; the JSON answer. */
async function echo(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: "POST", body: JSON.stringify({ message: "hi" }) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const ACTIVATED = /^\[exec\] activate_deployment: activated$/;
const WEBHOOK = /^│ webhook "echo": (http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26}) +│$/;

/** A copy of examples/sync-echo to edit, with its manifest named `manifest`. */
async function project(manifest = "manifest.yaml"): Promise<string> {
  const dir = await mkdtemp(join(home, "project-"));
  await cp(join(repoRoot, "examples/sync-echo"), dir, { recursive: true });
  if (manifest !== "manifest.yaml") {
    await cp(join(dir, "manifest.yaml"), join(dir, manifest));
    await rm(join(dir, "manifest.yaml"));
  }
  return dir;
}

describe("cli up --watch", () => {
  it("redeploys a saved handler, keeps the last good deployment through a syntax error", async () => {
    const dir = await project();
    const handlers = join(dir, "handlers.py");
    const original = await readFile(handlers, "utf8");
    const cli = startCli([
      ...["up", "--mode", "dev", "--port", "0", "--watch"],
      ...["--deploy", join(dir, "manifest.yaml")],
    ]);
    const url = WEBHOOK.exec(await cli.until("out", WEBHOOK))![1]!;
    await cli.until("err", /^watching .* for changes$/);
    expect(await echo(url)).toEqual({ echo: "hi", length: 2 });

    // A saved change: the plan lines, then the new behaviour over HTTP.
    await writeFile(handlers, original.replace('"length"', '"size"'));
    await cli.until("out", ACTIVATED, 2);
    expect(cli.out).toContain('[plan] trigger "sync_echo:/echo": found, no changes needed');
    expect(cli.err).toContain("changed: handlers.py; redeploying");
    expect(await echo(url)).toEqual({ echo: "hi", size: 2 });

    // A syntax error on line 8: the build's own error line; the last good deployment serves on.
    const lines = original.replace('"length"', '"size"').split("\n");
    lines.splice(7, 0, "def broken(:");
    await writeFile(handlers, lines.join("\n"));
    await cli.until("err", /^error: handlers\.py:8: SyntaxError/);
    await cli.until("err", /^deploy failed; deployment dep_[0-9a-z]{26} keeps serving/);
    expect(cli.out.filter((l) => ACTIVATED.test(l))).toHaveLength(2);
    expect(await echo(url)).toEqual({ echo: "hi", size: 2 });

    // Fixed: served again, with the newest code.
    await writeFile(handlers, original.replace('"length"', '"chars"'));
    await cli.until("out", ACTIVATED, 3);
    expect(await echo(url)).toEqual({ echo: "hi", chars: 2 });
    expect(await stop(cli.child)).toBe(0);
  }, 120_000);

  it("refuses --watch without --deploy", async () => {
    const cli = startCli(["up", "--port", "0", "--watch"]);
    expect(await cli.exited).toBe(1);
    expect(cli.err.at(-1)).toBe("error: --watch needs --deploy <manifest>");
  }, 30_000);
});

describe("cli dev", () => {
  it("deploys ./autokitteh.yaml, redeploys a manifest change, survives a bad manifest", async () => {
    const dir = await project("autokitteh.yaml");
    const manifest = join(dir, "autokitteh.yaml");
    const cli = startCli(["dev", "--port", "0"], dir);
    await cli.until("out", /^hookline listening on .* \(mode dev\)$/);
    const url = WEBHOOK.exec(await cli.until("out", WEBHOOK))![1]!;
    // Said before the first deploy (a deploy later): the boxed URLs are the start's last lines.
    expect(cli.err.filter((l) => /^watching .* for changes$/.test(l))).toHaveLength(1);

    // A trigger added to the manifest: created, and its URL printed.
    const text = await readFile(manifest, "utf8");
    const added = `${text}  - name: echo_two\n    type: webhook\n    call: handlers.py:on_echo\n    is_sync: true\n`;
    await writeFile(manifest, added);
    await cli.until("out", /^\[plan\] trigger "sync_echo:\/echo_two": not found, will create$/);
    const second = await cli.until(
      "out",
      /^│ webhook "echo_two": http:\/\/127\.0\.0\.1:\d+\/webhooks\//,
    );
    expect(await echo(/(http:\S+)/.exec(second)![1]!)).toEqual({ echo: "hi", length: 2 });

    // A bad manifest: its file:line: issue, nothing deployed, both triggers still served.
    await writeFile(manifest, added.replace("is_sync: true\n", "is_sync: maybe\n"));
    await cli.until("err", /^autokitteh\.yaml:\d+: triggers\[\d\]\.is_sync: /);
    await cli.until("err", /^deploy failed; deployment dep_/);
    expect(cli.out.filter((l) => ACTIVATED.test(l))).toHaveLength(2);
    expect(await echo(url)).toEqual({ echo: "hi", length: 2 });
    expect(await echo(/(http:\S+)/.exec(second)![1]!)).toEqual({ echo: "hi", length: 2 });
    expect(await stop(cli.child)).toBe(0);
  }, 120_000);

  it("says which manifest it looked for when there is none", async () => {
    const empty = await mkdtemp(join(home, "empty-"));
    const cli = startCli(["dev", "--port", "0"], empty);
    expect(await cli.exited).toBe(1);
    expect(cli.err.at(-1)).toBe(
      `error: no manifest.yaml (or autokitteh.yaml) in ${empty}; name one with --manifest`,
    );
  }, 30_000);
});

/** `cli …` to completion against the service at `url`. */
const cliAt = (url: string, args: string[]) =>
  execa("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
    cwd: repoRoot,
    env: { SVC_URL: url, SVC_API_TOKEN: "", XDG_CONFIG_HOME: join(home, "config") },
    reject: false,
  });

describe("cli session prints --follow", () => {
  const emu = useEmulator();
  let hook = "";
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), "hookline-follow-"));
    await writeFile(
      join(dir, "manifest.yaml"),
      "version: v2\nproject:\n  name: follow_demo\ntriggers:\n" +
        "  - name: slow\n    type: webhook\n    call: handlers.py:on_slow\n",
    );
    // The handler waits for a file to appear, so the test decides when it prints the rest.
    await writeFile(
      join(dir, "handlers.py"),
      "import os, time\n\n\ndef on_slow(event):\n    flag = event.data.body.text\n" +
        '    print("started")\n    while not os.path.exists(flag):\n        time.sleep(0.05)\n' +
        '    print("finished")\n',
    );
    hook = (await emu.deploy(dir)).slow!;
    await rm(dir, { recursive: true, force: true });
  }, 180_000);

  it("streams a running session's prints until it ends, for an id and for a project", async () => {
    const flag = join(home, `flag-${Date.now()}`);
    const res = await fetch(hook, { method: "POST", body: flag });
    const { session_id } = (await res.json()) as { session_id: string };
    const env = { SVC_URL: emu.url, SVC_API_TOKEN: "", XDG_CONFIG_HOME: join(home, "config") };
    const byId = spawnCli(["session", "prints", session_id, "--follow", "--no-timestamps"], env);
    const byProject = spawnCli(["session", "prints", "follow_demo", "-f"], env);
    await byId.until("out", /^started$/);
    await byProject.until("out", /^\[[\d\-T:.]+Z\] started$/);
    // Still following: the session has not finished, and neither has the command.
    await new Promise((r) => setTimeout(r, 300));
    expect(byId.child.exitCode).toBeNull();
    await writeFile(flag, "go");
    expect(await byId.exited).toBe(0);
    expect(await byProject.exited).toBe(0);
    expect(byId.out).toEqual(["started", "finished"]);
    expect(byProject.out).toHaveLength(2);
    expect(byId.err).toEqual([`session ${session_id}: completed`]);
  }, 60_000);
});

describe("cli session list over many sessions", () => {
  const store = mkdtempSync(join(tmpdir(), "hookline-many-"));
  const COUNT = 1050;
  // Seeded before the service starts (hooks run in order); long names make each row ~150 bytes,
  // so the whole list (~160 KB) is more than a pipe holds.
  beforeAll(async () => {
    const stores = createStores(createStorageFromUrl(`fs:${store}`));
    const ids = Array.from({ length: COUNT }, () => newId("ses"));
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(
        ids.slice(i, i + 50).map((id) =>
          stores.sessions.put(
            sessionRecord({
              id,
              project_name: `a_project_with_a_long_name_${"p".repeat(20)}`,
              trigger_name: `a_trigger_with_a_long_name_${"t".repeat(20)}`,
            }),
          ),
        ),
      );
    }
    await stores.dispose();
  }, 120_000);
  const emu = useEmulator({ storage: `fs:${store}` });
  // This hook runs before useEmulator's (stack order): close the service first, so nothing
  // writes into the store while it is removed.
  afterAll(async () => {
    await emu.emulator?.close();
    await rm(store, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }, 60_000);

  it("says on stderr how many rows it left out; stdout holds only rows", async () => {
    const all = await cliAt(emu.url, ["session", "list"]);
    expect(all.exitCode).toBe(0);
    expect(all.stdout.split("\n")).toHaveLength(101); // the heading and the newest 100
    // Nothing counted: the notice names the option that gives the next page (the last row's id).
    const lastOf = (out: string) => out.split("\n").at(-1)!.split(/\s+/)[0];
    expect(all.stderr).toBe(
      `showing the newest 100; older ones with --before ${lastOf(all.stdout)}`,
    );
    const byState = await cliAt(emu.url, ["session", "list", "--state", "completed"]);
    expect(byState.stderr).toBe(
      `showing the newest 100; older ones with --before ${lastOf(byState.stdout)}`,
    ); // all completed
    const every = await cliAt(emu.url, ["session", "list", "--limit", "2000"]);
    expect(every.stdout.split("\n")).toHaveLength(COUNT + 1);
    expect(every.stderr).toBe("");
  }, 60_000);

  it("exits quietly with status 0 when its output pipe closes", async () => {
    const r = await execa(
      "bash",
      [
        "-c",
        `set -o pipefail; node ${join(repoRoot, "bin/cli.mjs")} session list --limit 2000 | head -1`,
      ],
      { cwd: repoRoot, env: { SVC_URL: emu.url, SVC_API_TOKEN: "" }, reject: false },
    );
    expect(r.stdout).toMatch(/^ID\s+PROJECT\s+TRIGGER\s+STATE\s+CREATED$/);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
  }, 60_000);
});
