import { HooklineError } from "../src/errors.ts";
import { pip } from "../src/runtime/python/pip.ts";

/**
 * Installs `workflow_sdk` from `runtimeDir` into `python`'s environment, with no network:
 * `pip install --no-index --no-build-isolation --no-deps`. python-runtime builds with a
 * standard-library backend of its own (python-runtime/_build), so nothing else is needed.
 * @example await installSdk("/data/venv/bin/python", "/src/python-runtime");
 */
export async function installSdk(python: string, runtimeDir: string): Promise<void> {
  try {
    await pip(python, [
      "--no-index",
      "--no-build-isolation",
      "--no-deps",
      "--force-reinstall",
      runtimeDir,
    ]);
  } catch (e) {
    throw new HooklineError(
      "unavailable",
      `installing workflow_sdk from ${runtimeDir} failed:\n${(e as Error).message}`,
    );
  }
}
