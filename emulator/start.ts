import { join } from "node:path";
import type { Settings } from "../src/config.ts";
import type { Logger } from "../src/log.ts";
import { REPO_ROOT, type Service, startService } from "../src/platform/node.ts";
import { checkWorkerPython } from "../src/runtime/python/python.ts";
import { ensureVenv } from "./venv.ts";

export type Emulator = Service;

/**
 * The local emulator: the Node service, with Python from `SVC_WORKER_PYTHON` when set, else a
 * virtual environment under the data home, made at the first deploy: `workflow_sdk` offline, then
 * the pre-installed packages from whatever index pip reaches (none with `SVC_PREINSTALL=off`).
 * @example const emu = await startEmulator(resolveSettings({ port: 0 }), { log: console.log });
 */
export function startEmulator(
  settings: Settings,
  opts: { log: (line: string) => void },
): Promise<Emulator> {
  const venvDir = join(settings.dataHome, "venv");
  const python = settings.workerPython
    ? () => checkWorkerPython(settings.workerPython as string, REPO_ROOT)
    : (log: Logger) =>
        ensureVenv({
          venvDir,
          repoRoot: REPO_ROOT,
          // Through the service's log, so that SVC_LOG_FORMAT=json makes these lines JSON too.
          onProgress: (line) => log.info(line),
          // SVC_PREINSTALL=off: workflow_sdk only (an air-gapped machine, a test's throwaway home).
          preinstall: process.env.SVC_PREINSTALL !== "off",
        });
  return startService(settings, { log: opts.log, python });
}
