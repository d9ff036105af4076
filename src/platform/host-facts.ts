import { join } from "node:path";
import type { Settings } from "../config.ts";
import { describeStorage } from "../storage-url.ts";
import type { HostFacts } from "../ui/about.ts";

/**
 * How this service runs, in words, for the UI's settings page (no secret in any of it: the
 * storage URL's password is redacted by describeStorage).
 * @example hostFacts(settings, {}).python // "python3 on PATH"
 */
export function hostFacts(settings: Settings, opts: { python?: unknown }): HostFacts {
  const venvDir = join(settings.dataHome, "venv");
  let storage: string;
  try {
    storage = describeStorage(settings.storage, settings.dataHome).text;
  } catch (e) {
    storage = (e as Error).message;
  }
  const python = settings.workerPython
    ? `SVC_WORKER_PYTHON=${settings.workerPython}`
    : opts.python
      ? `${venvDir} (made at the first deploy)`
      : "python3 on PATH";
  return {
    mode: settings.mode,
    storage,
    dataHome: settings.dataHome,
    python,
    ...(!settings.workerPython && { venvDir }),
  };
}
