import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "../../emulator/python/venv.ts";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** Where the tests' shared Python environment lives (kept between runs, rebuilt when stale). */
export const testVenvDir = join(repoRoot, "node_modules", ".cache", "hookline-test-venv");

/**
 * A Python with this checkout's `workflow_sdk` installed: a venv made once (per checkout, shared
 * by every test file and worker, guarded by a lock) and reinstalled when python-runtime changes.
 * Creating it takes a few seconds; give the first caller's hook a long timeout.
 * @example beforeAll(async () => { python = await testPython(); }, 180_000);
 */
export function testPython(): Promise<string> {
  return ensureVenv({ venvDir: testVenvDir, repoRoot, preinstall: false });
}
