import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings, type Settings } from "../src/config.ts";
import { REPO_ROOT, type Service, startService } from "../src/platform/node.ts";
import { checkWorkerPython } from "../src/runtime/python/python.ts";
import { ensureVenv } from "./venv.ts";

export type Emulator = Service;

/**
 * The local emulator: the Node service, with Python from `SVC_WORKER_PYTHON` when set, else a
 * virtual environment under the data home, made offline at the first deploy.
 * @example const emu = await startEmulator(resolveSettings({ port: 0 }), { log: console.log });
 */
export function startEmulator(
  settings: Settings,
  opts: { log: (line: string) => void },
): Promise<Emulator> {
  const venvDir = join(settings.dataHome, "venv");
  const python = settings.workerPython
    ? () => checkWorkerPython(settings.workerPython as string, REPO_ROOT)
    : () => ensureVenv({ venvDir, repoRoot: REPO_ROOT, onProgress: (line) => opts.log(line) });
  return startService(settings, { log: opts.log, python });
}

/**
 * A quiet emulator for tests and the bench: dev mode, a random port, a data home of its own,
 * memory storage and the given Python unless `flags` say otherwise.
 * @example const { emulator } = await startQuietEmulator(await checkoutPython());
 */
export async function startQuietEmulator(
  python: string,
  flags: Partial<Settings> = {},
  prefix = "hookline-emu-",
): Promise<{ emulator: Emulator; dataHome: string }> {
  const dataHome = mkdtempSync(join(tmpdir(), prefix));
  const settings = resolveSettings(
    {
      mode: "dev",
      port: 0,
      dataHome,
      configHome: join(dataHome, "config"),
      storage: "memory:",
      workerPython: python,
      ...flags,
    },
    {},
  );
  try {
    return { emulator: await startEmulator(settings, { log: () => {} }), dataHome };
  } catch (e) {
    rmSync(dataHome, { recursive: true, force: true }); // refused at start: nobody else removes it
    throw e;
  }
}
