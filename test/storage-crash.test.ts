import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createStorageFromUrl } from "../src/storage/driver.ts";

const repoRoot = join(import.meta.dirname, "..");
const writer = join(repoRoot, "test/support/storage-crash-writer.ts");
const dir = join(mkdtempSync(join(tmpdir(), "hookline-crash-")), "db");
afterAll(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

/** Runs the writer until it has printed `lines` keys, SIGKILLs it, and returns every key it printed. */
function writeThenKill(round: number, lines: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", writer, dir, String(round)], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (!killed && out.split("\n").length > lines) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL") {
        reject(new Error(`writer exited on its own (${code}): ${err}`));
        return;
      }
      // Only whole lines: the last one may have been cut by the kill.
      resolve(out.slice(0, out.lastIndexOf("\n")).split("\n").filter(Boolean));
    });
  });
}

describe("lmdb storage after a SIGKILL", () => {
  it("keeps every key whose write had returned", async () => {
    const printed: string[] = [];
    // Three kills at different points, each round writing on after the previous crash.
    for (const [round, lines] of [
      [0, 200],
      [1, 600],
      [2, 1500],
    ] as const) {
      const keys = await writeThenKill(round, lines);
      expect(keys.length).toBeGreaterThanOrEqual(lines);
      printed.push(...keys);
    }
    const storage = createStorageFromUrl(`lmdb:${dir}`);
    try {
      const missing: string[] = [];
      for (const key of printed) {
        const value = await storage.getItem<{ key: string; pad: string }>(key);
        if (value?.key !== key || value.pad.length !== 250) missing.push(key);
      }
      expect(missing).toEqual([]);
      // Batches are whole: an index key is there exactly when both of its batch's keys are.
      const index = await storage.getKeys("crash-index");
      for (const key of index) {
        const id = key.slice("crash-index:".length);
        expect(await storage.hasItem(`crash:${id}:a`)).toBe(true);
        expect(await storage.hasItem(`crash:${id}:b`)).toBe(true);
      }
      const halves = (await storage.getKeys("crash")).filter((k) => k.endsWith(":a"));
      expect(halves.length).toBe(index.length);
    } finally {
      await storage.dispose();
    }
  }, 90_000);
});
