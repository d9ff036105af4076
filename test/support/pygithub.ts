import { existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { repoRoot } from "./python.ts";

/** PyGithub from this machine's index, in the folder connection-examples.test.ts uses too. */
export const PYGITHUB = join(repoRoot, "node_modules", ".cache", "hookline-e2e-pygithub");

/**
 * The folder with PyGithub for the sessions' Python (installed once, with pip, from the index).
 * @example process.env.PYTHONPATH = await pygithubFolder(await testPython());
 */
export async function pygithubFolder(python: string): Promise<string> {
  if (existsSync(join(PYGITHUB, "github", "__init__.py"))) return PYGITHUB;
  const args = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"];
  const pip = await execa(python, [...args, "--target", PYGITHUB, "PyGithub"], {
    all: true,
    reject: false,
    stdin: "ignore",
  });
  if (pip.failed) throw new Error(`pip could not install PyGithub for this test:\n${pip.all}`);
  return PYGITHUB;
}
