import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../emulator/start.ts";
import { resolveSettings } from "../src/config.ts";
import { until } from "./support/until.ts";

/**
 * `SVC_LOG_FORMAT=json` on a fresh data home: the service makes its Python environment (as
 * `cli up` does on a first start, the pre-installed packages left out), and every line it
 * writes meanwhile, the environment's included, is one JSON object.
 */
describe("a fresh start with SVC_LOG_FORMAT=json", () => {
  const dataHome = mkdtempSync(join(tmpdir(), "hookline-jsonlog-"));
  let emulator: Emulator | null = null;
  afterAll(async () => {
    await emulator?.close();
    rmSync(dataHome, { recursive: true, force: true });
  }, 60_000);

  it("writes every line as one JSON object, the Python environment's too", async () => {
    process.env.SVC_PREINSTALL = "off";
    const settings = resolveSettings(
      { mode: "dev", port: 0, dataHome, configHome: join(dataHome, "config"), storage: "memory:" },
      { SVC_LOG_FORMAT: "json" },
    );
    expect(settings.workerPython).toBeUndefined();
    const lines: string[] = [];
    emulator = await startEmulator(settings, { log: (line) => lines.push(line) });
    const readyz = async () => (await fetch(`${emulator!.url}/readyz`)).status;
    await until("the Python environment is made", async () => (await readyz()) === 200, 240_000);
    const parsed = lines.map((line) => {
      try {
        return JSON.parse(line) as { level: string; message: string };
      } catch {
        return { level: "not JSON", message: line };
      }
    });
    expect(parsed.filter((l) => l.level === "not JSON")).toEqual([]);
    const messages = parsed.map((l) => l.message);
    expect(messages.some((m) => m.startsWith("creating the Python environment at "))).toBe(true);
    expect(messages.some((m) => m.startsWith("Python environment ready: "))).toBe(true);
  }, 300_000);
});
