import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { FORMAT_KEY, FORMAT_VERSION } from "../src/storage/format.ts";
import { startCli, stopAll } from "./support/cli-process.ts";
import {
  makeOldDataHome,
  type OldDataHome,
  oldBuild,
  oldLmdbHome,
  PROBE_KEY,
  PROBE_TOKEN,
} from "./support/old-data-home.ts";
import { freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { redisTestUrl, warnIfNoRedis } from "./support/redis.ts";
import { until } from "./support/until.ts";

/**
 * A data home written by the release before store formats were versioned (format 1, made by
 * test/support/old-data-home.ts from that commit) is opened by this one: it is migrated at the
 * start, and the durable session the old release left parked in next_event resumes, its journal,
 * its secret var and its store value intact, and completes.
 */

const work = mkdtempSync(join(tmpdir(), "hookline-upgrade-"));
let python = "";
beforeAll(async () => {
  python = await testPython();
  await oldBuild(); // cached under .cache/old-data-home after the first run
}, 600_000);
afterEach(stopAll);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const envOf = (old: OldDataHome, url?: string): NodeJS.ProcessEnv => ({
  XDG_DATA_HOME: join(old.home, "data"),
  XDG_CONFIG_HOME: join(old.home, "config"),
  SVC_SECRET_KEY: PROBE_KEY,
  SVC_WORKER_PYTHON: python,
  ...(old.storage ? { SVC_STORAGE: old.storage } : {}),
  ...(url ? { SVC_URL: url } : {}),
});

async function formatLine(old: OldDataHome): Promise<string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_")),
  );
  const where = await execa("node", [join(repoRoot, "bin/cli.mjs"), "config", "where"], {
    env: { ...env, ...envOf(old) },
    extendEnv: false,
  });
  return where.stdout.split("\n").find((l) => l.startsWith("storage format:")) ?? where.stdout;
}

/** Starts this release on the old data home and wakes the parked session. */
async function upgradeAndResume(old: OldDataHome) {
  expect(await formatLine(old)).toContain(
    `storage format: 1 (this release writes ${FORMAT_VERSION})`,
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const up = startCli(["up", "--mode", "dev", "--port", String(port)], envOf(old, url));
  await waitHealthy(url, 60_000);
  const said = [...up.out, ...up.err].join("\n");
  expect(said).toContain(`storage: format 1 upgraded to ${FORMAT_VERSION}`);
  expect(await formatLine(old)).toContain(
    `storage format: ${FORMAT_VERSION} (this release writes ${FORMAT_VERSION})`,
  );

  type Log = {
    session: { state: string };
    entries: { kind: string; text?: string }[];
    journal: { kind: string }[];
  };
  const log = async () =>
    (await (await fetch(`${url}/api/v1/sessions/${old.sessionId}/log`)).json()) as Log;
  const before = await log();
  expect(before.session.state).toBe("running");
  expect(before.journal.map((s) => s.kind)).toEqual(["activity", "store", "subscribe"]);

  const res = await fetch(`${url}${old.goPath}`, { method: "POST", body: "go-now" });
  expect(res.status).toBe(202);
  const after = await until("the session to end", async () => {
    const l = await log();
    return l.session.state !== "running" && l;
  });
  const digest = createHash("sha256").update(PROBE_TOKEN).digest("hex").slice(0, 12);
  expect(after.session.state).toBe("completed");
  const prints = after.entries.filter((e) => e.kind === "print").map((e) => e.text?.trimEnd());
  expect(prints).toContain(`resumed: fetched-1 go-now token=${digest} store={'kept': 'fetched-1'}`);
}

describe("a data home of a newer format", () => {
  it("is refused at start in one line naming both versions, and left as it was", async () => {
    const home = join(work, "newer");
    const url = `lmdb:${join(home, "data", "hookline", "db")}`;
    const storage = createStorageFromUrl(url);
    await storage.setItem(FORMAT_KEY, FORMAT_VERSION + 1);
    await storage.setItem("projects:prj_kept", { kept: true });
    await storage.dispose();
    const up = startCli(["up", "--mode", "dev", "--port", "0"], {
      ...envOf({ home, sessionId: "", goPath: "" }),
    });
    expect(await up.exited).toBe(1);
    expect(up.err.at(-1)).toBe(
      `error: storage format ${FORMAT_VERSION + 1} is newer than this release reads (format ${FORMAT_VERSION}): run the release that wrote it, or restore a backup made by this one (docs/operations.md)`,
    );
    const after = createStorageFromUrl(url);
    expect(await after.getKeys()).toEqual([FORMAT_KEY, "projects:prj_kept"].sort());
    expect(await after.getItem(FORMAT_KEY)).toBe(FORMAT_VERSION + 1);
    await after.dispose();
  }, 120_000);
});

describe("a data home of format 1, opened by this release", () => {
  it("lmdb (the embedded default): migrated; the parked durable session resumes with its secret and store value", async () => {
    const old = await oldLmdbHome(join(work, "lmdb"));
    await upgradeAndResume(old);
  }, 600_000);

  it.skipIf(!warnIfNoRedis("the Redis upgrade test"))(
    "redis: journals move into hashes; the parked durable session resumes",
    async () => {
      const old = await makeOldDataHome({ home: join(work, "redis"), storage: redisTestUrl() });
      await upgradeAndResume(old);
    },
    600_000,
  );
});
