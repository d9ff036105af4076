import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./support/python.ts";

/** What a command must not load unless it opens that store: drivers and native bindings. */
const HEAVY =
  /\/node_modules\/(ioredis|lmdb|msgpackr|msgpackr-extract|pg|@lmdb|unstorage\/drivers)\//;

/** The modules `cli …args` resolved, as a user runs it (`node bin/cli.mjs`), whatever its exit. */
async function loaded(args: string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "hl-imports-"));
  const log = join(dir, "imports.log");
  await execa(
    "node",
    [
      "--import",
      join(repoRoot, "test/support/import-log.mjs"),
      join(repoRoot, "bin/cli.mjs"),
      ...args,
    ],
    {
      // Nothing listens on port 9: a command that asks the service fails after loading what it uses.
      env: {
        IMPORT_LOG: log,
        SVC_URL: "http://127.0.0.1:9",
        XDG_DATA_HOME: dir,
        XDG_CONFIG_HOME: dir,
      },
      reject: false,
    },
  );
  return readFileSync(log, "utf8").split("\n").filter(Boolean);
}

describe("what a cli command loads", () => {
  it.each(["--help", "session list", "trigger list", "session --help"])(
    "cli %s loads no storage driver, Redis client or native binding",
    async (command) => {
      const urls = await loaded(command.split(" "));
      expect(urls.some((u) => u.endsWith("/src/cli/main.js"))).toBe(true);
      expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
    },
  );

  it("sees the native binding a command that opens the store loads (the check can fail)", async () => {
    const urls = await loaded(["backup", join(tmpdir(), "no-such-dir", "b.mdb")]);
    expect(urls.some((u) => /\/node_modules\/lmdb\//.test(u))).toBe(true);
  });
});
