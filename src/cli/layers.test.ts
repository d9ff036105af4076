import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The CLI is a client of the API: it reaches the service over HTTP only. Its files may import
 * each other, the model, the manifest (the local check before upload), the deploy answer's
 * schema, and the base modules; nothing that stores, runs or serves.
 */

const SRC = resolve(import.meta.dirname, "..");
const CLI = join(SRC, "cli");

const ALLOWED = [
  /^cli\//,
  /^model\//,
  /^manifest\//,
  /^deploy\/result\.ts$/, // the wire shape of the deploy answer: valibot only
  /^(errors|ids|log|paths|locks|secrets|config|storage-url)\.ts$/, // storage-url: strings and folder listings, no database
];
/** Never reached, not even through an allowed module. */
const FORBIDDEN = [
  /^storage\//,
  /^sessions\//,
  /^routes\//,
  /^platform\//,
  /^runtime\//,
  /^cluster\//,
  /^deploy\/(?!result\.ts$)/,
  /^app\.ts$/,
];

/** The relative imports of a file (static, dynamic and re-exports), as paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"';]*?\bfrom\s+["']([^"']+)["']/g),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+["']([^"']+)["']/g),
  ].map((m) => m[1]!);
  return specifiers
    .filter((s) => s.startsWith("."))
    .map((s) => relative(SRC, resolve(dirname(file), s)).replaceAll("\\", "/"));
}

const cliFiles = readdirSync(CLI)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
  .map((f) => join(CLI, f));

describe("the CLI's imports", () => {
  it("reads the imports it checks", () => {
    expect(importsOf(join(CLI, "deploy.ts"))).toEqual(
      expect.arrayContaining(["cli/client.ts", "deploy/result.ts", "manifest/index.ts"]),
    );
  });

  it.each(cliFiles.map((f) => [relative(SRC, f), f]))(
    "%s imports only allowed modules",
    (_, file) => {
      const bad = importsOf(file).filter((p) => !ALLOWED.some((re) => re.test(p)));
      expect(bad).toEqual([]);
    },
  );

  it("reaches nothing that stores, runs or serves, even through the modules it may import", () => {
    const seen = new Set<string>();
    const reached: string[] = [];
    const walk = (path: string) => {
      if (seen.has(path)) return;
      seen.add(path);
      if (FORBIDDEN.some((re) => re.test(path))) reached.push(path);
      for (const next of importsOf(join(SRC, path))) walk(next);
    };
    for (const file of cliFiles) walk(relative(SRC, file));
    expect(reached).toEqual([]);
    expect(seen.size).toBeGreaterThan(cliFiles.length); // the walk did follow imports
  });
});
