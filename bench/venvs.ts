import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ensureVenv } from "../emulator/venv.ts";
import { REPO_ROOT } from "../src/platform/node.ts";

/** Where pyenv keeps its interpreters (BENCH_PYTHONS looks there). */
export const PYENV = "/root/.pyenv/versions";

/** The pyenv interpreter for "3.12" (the newest 3.12.x there), or null. */
function pyenvPython(version: string): string | null {
  if (!existsSync(PYENV)) return null;
  const dirs = readdirSync(PYENV)
    .filter((d) => d === version || d.startsWith(`${version}.`))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const dir = dirs.at(-1);
  return dir ? join(PYENV, dir, "bin", "python3") : null;
}

/**
 * A venv per version under node_modules/.cache, made offline with this checkout's SDK.
 * @example await venvFor("3.12", console.error) // ".../hookline-bench-venv-3.12/bin/python"
 */
export async function venvFor(
  version: string,
  log: (line: string) => void,
): Promise<string | null> {
  const base = pyenvPython(version);
  if (!base) return null;
  return ensureVenv({
    venvDir: join(REPO_ROOT, "node_modules", ".cache", `hookline-bench-venv-${version}`),
    repoRoot: REPO_ROOT,
    basePython: base,
    preinstall: false,
    onProgress: log,
  });
}
