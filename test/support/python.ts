import { fileURLToPath } from "node:url";
import { checkoutPython } from "../../emulator/venv.ts";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A Python with this checkout's `workflow_sdk` installed (see `checkoutPython`).
 * @example beforeAll(async () => { python = await testPython(); }, 180_000);
 */
export function testPython(): Promise<string> {
  return checkoutPython(repoRoot);
}
