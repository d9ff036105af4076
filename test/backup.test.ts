import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FORMAT_VERSION } from "../src/storage/format.ts";
import { startCli, stopAll } from "./support/cli-process.ts";
import {
  makeOldDataHome,
  type OldDataHome,
  PROBE_KEY,
  PROBE_TOKEN,
} from "./support/old-data-home.ts";
import { freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";

/**
 * `cli backup` of a running service's embedded store, and `cli restore` into a fresh data home:
 * the durable session parked in next_event resumes there and reads its secret; another key, a
 * store in use or one holding data are refused with one line, changing nothing.
 */

const work = mkdtempSync(join(tmpdir(), "hookline-backup-"));
const OTHER_KEY = `${"0".repeat(63)}1`;
let python = "";
beforeAll(async () => {
  python = await testPython();
}, 600_000);
afterEach(stopAll);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const homeEnv = (home: string, key = PROBE_KEY): NodeJS.ProcessEnv => ({
  XDG_DATA_HOME: join(home, "data"),
  XDG_CONFIG_HOME: join(home, "config"),
  SVC_SECRET_KEY: key,
  SVC_WORKER_PYTHON: python,
});

/** `cli …` of this checkout, with no SVC_* of the test's own environment. */
function cli(args: string[], env: NodeJS.ProcessEnv) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_")),
  );
  return execa("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
    env: { ...base, ...env },
    extendEnv: false,
    reject: false,
  });
}

const files = (dir: string) =>
  existsSync(dir) ? readdirSync(dir, { recursive: true }).sort() : [];

describe("cli backup and cli restore of the embedded store", () => {
  it("round-trips a running service's data: the parked session resumes and its secret reads", async () => {
    const file = join(work, "hookline.mdb");
    let backedUp = "";
    const made: OldDataHome = await makeOldDataHome({
      home: join(work, "a"),
      release: { dir: repoRoot, python },
      whileRunning: async (env) => {
        const r = await cli(["backup", file], env);
        expect(r.stderr).toBe("");
        expect(r.exitCode).toBe(0);
        backedUp = r.stdout;
        // A second backup to the same file is refused, the first kept.
        const again = await cli(["backup", file], env);
        expect(again.exitCode).toBe(1);
        expect(again.stderr).toBe(`error: backup: ${file} exists; give a new file name`);
      },
    });
    expect(backedUp).toBe(`backup: ${file} (storage format ${FORMAT_VERSION})`);

    // Another key: refused, naming SVC_SECRET_KEY; the fresh data home stays as it was.
    const b = join(work, "b");
    const wrong = await cli(["restore", file], homeEnv(b, OTHER_KEY));
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(
      /^error: restore: the backup's secrets do not open with this SVC_SECRET_KEY/,
    );
    expect(wrong.stderr.split("\n")).toHaveLength(1);
    expect(files(b)).toEqual([]);

    const ok = await cli(["restore", file], homeEnv(b));
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toContain(`restored: ${file} (storage format ${FORMAT_VERSION})`);
    const restored = files(join(b, "data"));
    // Not empty any more: refused without --force, nothing changed.
    const twice = await cli(["restore", file], homeEnv(b));
    expect(twice.exitCode).toBe(1);
    expect(twice.stderr).toMatch(/^error: restore: .* holds a store already; .* --force/);
    expect(files(join(b, "data"))).toEqual(restored);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    startCli(["up", "--mode", "dev", "--port", String(port)], homeEnv(b));
    await waitHealthy(url, 60_000);
    // In use by that service: refused even with --force.
    const busy = await cli(["restore", "--force", file], homeEnv(b));
    expect(busy.exitCode).toBe(1);
    expect(busy.stderr).toMatch(/^error: restore: .* is open in process \d+/);

    const res = await fetch(`${url}${made.goPath}`, { method: "POST", body: "after-restore" });
    expect(res.status).toBe(202);
    type Log = { session: { state: string }; entries: { kind: string; text?: string }[] };
    const end = Date.now() + 60_000;
    let log: Log;
    for (;;) {
      log = (await (await fetch(`${url}/api/v1/sessions/${made.sessionId}/log`)).json()) as Log;
      if (log.session.state !== "running" || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(log.session.state).toBe("completed");
    const digest = createHash("sha256").update(PROBE_TOKEN).digest("hex").slice(0, 12);
    const prints = log.entries.filter((e) => e.kind === "print").map((e) => e.text?.trimEnd());
    expect(prints).toContain(
      `resumed: fetched-1 after-restore token=${digest} store={'kept': 'fetched-1'}`,
    );

    // Stopped, --force replaces it and keeps the store that was there aside.
    await stopAll();
    const forced = await cli(["restore", "--force", file], homeEnv(b));
    expect(forced.stderr).toBe("");
    expect(forced.stdout).toMatch(
      /^restore: the store that was there is kept in .*db\.before-restore-/,
    );
    const aside = readdirSync(join(b, "data", "hookline")).filter((n) =>
      n.startsWith("db.before-restore-"),
    );
    expect(aside).toHaveLength(1);
    expect(files(join(b, "data", "hookline", aside[0]!))).toContain("data.mdb");
  }, 600_000);

  it("refuses what is no backup, and stores that are not the embedded lmdb, in one line", async () => {
    const junk = join(work, "junk.mdb");
    writeFileSync(junk, "not lmdb at all, just some bytes".repeat(200));
    const home = join(work, "c");
    const notBackup = await cli(["restore", junk], homeEnv(home));
    expect(notBackup.exitCode).toBe(1);
    expect(notBackup.stderr).toMatch(/^error: restore: .*junk\.mdb is not a Hookline backup/);
    expect(files(home)).toEqual([]);
    const fsStore = await cli(["backup", join(work, "x.mdb")], {
      ...homeEnv(home),
      SVC_STORAGE: `fs:${join(work, "fs-store")}`,
    });
    expect(fsStore.exitCode).toBe(1);
    expect(fsStore.stderr).toBe(
      `error: cli backup works on the embedded lmdb store; this one is fs: stop the service and copy the folder ${join(work, "fs-store")} (docs/operations.md)`,
    );
  });
});
