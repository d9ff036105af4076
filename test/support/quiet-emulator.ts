import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Emulator, startEmulator } from "../../emulator/start.ts";
import { resolveSettings, type Settings } from "../../src/config.ts";

/**
 * A quiet emulator for tests and the bench: dev mode, a random port, a data home of its own,
 * LMDB storage in it and the given Python unless `flags` say otherwise; its log lines go to
 * `log` (nowhere unless given).
 * @example const { emulator } = await startQuietEmulator(await testPython());
 */
export async function startQuietEmulator(
  python: string,
  flags: Partial<Settings> = {},
  prefix = "hookline-emu-",
  log: (line: string) => void = () => {},
): Promise<{ emulator: Emulator; dataHome: string }> {
  const dataHome = mkdtempSync(join(tmpdir(), prefix));
  const settings = resolveSettings(
    {
      mode: "dev",
      port: 0,
      dataHome,
      configHome: join(dataHome, "config"),
      // The store a user's `cli up` gets (so the webhooks take the front door, as theirs do).
      storage: `lmdb:${join(dataHome, "db")}`,
      workerPython: python,
      ...flags,
    },
    // The one variable taken from the environment: a run that slows the machine on purpose sets
    // SVC_SESSION_PRIORITY=idle to put every test's sessions behind its CPU hog.
    { SVC_SESSION_PRIORITY: process.env.SVC_SESSION_PRIORITY },
  );
  try {
    return { emulator: await startEmulator(settings, { log }), dataHome };
  } catch (e) {
    rmSync(dataHome, { recursive: true, force: true }); // refused at start: nobody else removes it
    throw e;
  }
}
