import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "../../emulator/venv.ts";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A Python with this checkout's `workflow_sdk` installed (see `checkoutPython`).
 * @example beforeAll(async () => { python = await testPython(); }, 180_000);
 */
export function testPython(): Promise<string> {
  return checkoutPython(repoRoot);
}

/**
 * A Python with this checkout's `workflow_sdk` for its tests and bench: a venv made once per
 * checkout under node_modules/.cache (shared by every test file and worker, guarded by a lock)
 * and reinstalled when python-runtime changes. Creating it takes a few seconds.
 * @example beforeAll(async () => { python = await checkoutPython(repoRoot); }, 180_000);
 */
export function checkoutPython(repoRoot: string): Promise<string> {
  const venvDir = join(repoRoot, "node_modules", ".cache", "hookline-test-venv");
  return ensureVenv({ venvDir, repoRoot, preinstall: false });
}
