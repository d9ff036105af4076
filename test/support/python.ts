import { createHash } from "node:crypto";
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
 * and reinstalled when python-runtime changes. Creating it takes a few seconds. Named after the
 * checkout's path: git worktrees that share one node_modules never reinstall each other's.
 * @example beforeAll(async () => { python = await checkoutPython(repoRoot); }, 180_000);
 */
export function checkoutPython(repoRoot: string): Promise<string> {
  const checkout = createHash("sha256").update(repoRoot).digest("hex").slice(0, 8);
  const venvDir = join(repoRoot, "node_modules", ".cache", `hookline-test-venv-${checkout}`);
  return ensureVenv({ venvDir, repoRoot, preinstall: false });
}
