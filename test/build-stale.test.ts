import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { staleReason } from "./support/build.ts";

/** A tree with src/ and emulator/: each source and its dist/ output, the sources a minute old. */
function tree(sources: string[]): string {
  const root = mkdtempSync(join(tmpdir(), "hookline-stale-"));
  mkdirSync(join(root, "emulator"), { recursive: true });
  for (const file of ["tsconfig.json", "tsconfig.build.json"])
    writeFileSync(join(root, file), "{}");
  for (const src of sources) {
    const out = join(root, "dist", src.replace(/\.tsx?$/, ".js"));
    mkdirSync(join(out, ".."), { recursive: true });
    mkdirSync(join(root, src, ".."), { recursive: true });
    writeFileSync(join(root, src), "");
    writeFileSync(out, "");
  }
  const old = new Date(Date.now() - 60_000);
  for (const file of ["tsconfig.json", "tsconfig.build.json", ...sources])
    utimesSync(join(root, file), old, old);
  return root;
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("the tests' dist/ check", () => {
  it("rebuilds when a .ts or a .tsx source is newer than its output, not for tests", () => {
    const root = tree(["src/app.ts", "src/ui/page.tsx", "emulator/up.ts"]);
    roots.push(root);
    expect(staleReason(root)).toBeNull();
    writeFileSync(join(root, "src/ui/page.tsx"), "export {};");
    expect(staleReason(root)).toBe("src/ui/page.tsx changed after dist/src/ui/page.js was built");
    rmSync(join(root, "src/ui/page.tsx"));
    writeFileSync(join(root, "src/ui/page.test.tsx"), "");
    expect(staleReason(root)).toBeNull();
    rmSync(join(root, "dist/src/app.js"));
    expect(staleReason(root)).toBe("dist/src/app.js is missing");
  });
});
