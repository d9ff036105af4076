// Vitest globalSetup: several suites run `node bin/cli.mjs` / `bin/container.mjs` as processes,
// and those run dist/. Rebuild when dist/ is missing or older than a source, so `npx vitest run`
// alone never tests yesterday's build.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Why dist/ must be rebuilt, or null when every source (`.ts` and `.tsx`) has an output at least
 * as new as it.
 * @example staleReason() // "dist/src/app.js is missing"
 */
export function staleReason(root = repoRoot): string | null {
  const files = ["src", "emulator"].flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((p) => /\.tsx?$/.test(p) && !/\.test\.tsx?$/.test(p))
      .map((p) => join(dir, p)),
  );
  const configs = ["tsconfig.json", "tsconfig.build.json"].map((f) => mtime(join(root, f)) ?? 0);
  for (const file of files) {
    const out = join("dist", file.replace(/\.tsx?$/, ".js"));
    const built = mtime(join(root, out));
    if (built === null) return `${out} is missing`;
    if (built < (mtime(join(root, file)) ?? 0)) return `${file} changed after ${out} was built`;
    if (configs.some((c) => built < c)) return `a tsconfig changed after ${out} was built`;
  }
  return null;
}

function mtime(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

export default function setup(): void {
  const why = staleReason();
  if (why === null) return;
  console.log(`building dist/ (${why})`);
  try {
    execFileSync("npm", ["run", "--silent", "build"], { cwd: repoRoot, stdio: "inherit" });
  } catch (err) {
    // tsc emits despite type errors: those are `npm run typecheck`'s to report, and a half-done
    // refactor should still run its tests. Anything that left dist/ stale is fatal.
    if (staleReason() !== null) throw err;
    console.warn("tsc reported errors (see npm run typecheck); dist/ was emitted anyway");
  }
  const still = staleReason();
  if (still !== null) throw new Error(`dist/ is still stale after npm run build: ${still}`);
}
