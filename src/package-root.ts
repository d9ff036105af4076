import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder of the nearest `package.json` at or above a module. Modules run from `src/` in
 * development and from `dist/src/` once built, so a fixed number of `..` would be right for one
 * of them only.
 * @example packageRoot(import.meta.url) // "/app" for /app/dist/src/cli/main.js
 */
export function packageRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`);
    dir = up;
  }
}
