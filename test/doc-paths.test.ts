import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./support/python.ts";

/**
 * Every repository path that README.md and docs/*.md name exists. What counts as a path:
 *
 * 1. A Markdown link to a relative target, `[text](target)` (not `http:`, `mailto:` nor a bare
 *    `#anchor`): the target, its `#anchor` dropped, relative to the page.
 * 2. Backticked text that starts with a top folder of the repository (`src/`, `test/`, `docs/`,
 *    `emulator/`, `python-runtime/`, `examples/`, `bench/`, `bin/`, `.ci/`) and holds only path
 *    characters (letters, digits, `_ . - / @`), maybe followed by `:<line or name>`: the path,
 *    from the repository's root. Globs and placeholders (`*`, `<id>`, `…`) are not paths.
 * 3. A backticked bare name of a TypeScript file (`name.ts`, `.tsx`, `.mjs`), as pages name a
 *    file of the folder they just named: some file of the repository has that name.
 *
 * Text inside fenced code blocks counts too: commands there name real files.
 */
const TOP = [
  "src",
  "test",
  "docs",
  "emulator",
  "python-runtime",
  "examples",
  "bench",
  "bin",
  ".ci",
];
const ROOTED = new RegExp(`^((?:${TOP.join("|").replace(".", "\\.")})/[\\w.@/-]*)(?::[\\w.]+)?$`);
const BARE_TS = /^([\w.-]+\.(?:ts|tsx|mjs))(?::[\w.]+)?$/;

/**
 * Paths named in docs/architecture.md that do not exist, left for the rewrite of that page
 * (feat/ingest): the lead empties this list after merging it. Nothing else may be listed.
 */
const KNOWN_BROKEN = new Set([
  "docs/architecture.md src/deploy.ts",
  "docs/architecture.md fire.ts",
]);

const pages = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
].sort();
const fileNames = new Set(
  execFileSync("git", ["ls-files"], { cwd: repoRoot, encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((p) => basename(p)),
);

/** What `page` names, as `{ named, exists }`. */
function namedPaths(page: string): { named: string; exists: boolean }[] {
  const text = readFileSync(join(repoRoot, page), "utf8");
  const out: { named: string; exists: boolean }[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!) || target!.startsWith("#")) continue;
    const path = normalize(join(dirname(page), target!.split("#")[0]!));
    out.push({ named: target!, exists: existsSync(join(repoRoot, path)) });
  }
  for (const [, code] of text.matchAll(/`([^`\n]+)`/g)) {
    const rooted = ROOTED.exec(code!);
    if (rooted) out.push({ named: code!, exists: existsSync(join(repoRoot, rooted[1]!)) });
    const bare = BARE_TS.exec(code!);
    if (bare) out.push({ named: code!, exists: fileNames.has(bare[1]!) });
  }
  return out;
}

describe("paths named in the docs", () => {
  const named = pages.flatMap((page) => namedPaths(page).map((p) => ({ page, ...p })));

  it("finds the paths it checks", () => {
    // A pattern that silently matched nothing would pass the rule below.
    expect(pages).toContain("docs/architecture.md");
    expect(named.length).toBeGreaterThan(200);
    expect(named).toContainEqual({ page: "README.md", named: "docs/ui.md", exists: true });
    expect(named).toContainEqual({
      page: "docs/storage.md",
      named: "src/storage/atomic-fs.ts",
      exists: true,
    });
  });

  it("names only paths that exist (but the known-broken ones of architecture.md)", () => {
    const missing = named
      .filter((p) => !p.exists && !KNOWN_BROKEN.has(`${p.page} ${p.named}`))
      .map((p) => `${p.page}: ${p.named}`);
    expect(missing).toEqual([]);
  });

  it("lists as known-broken only paths that are still broken", () => {
    const broken = new Set(named.filter((p) => !p.exists).map((p) => `${p.page} ${p.named}`));
    expect([...KNOWN_BROKEN].filter((k) => !broken.has(k))).toEqual([]);
  });
});
