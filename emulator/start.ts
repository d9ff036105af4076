import { join } from "node:path";
import type { Settings } from "../src/config.ts";
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
