import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const COMMON = join(import.meta.dirname, "..", "fixtures", "stand-in-activities", "common.py");

/**
 * Project folders that differ only in their `handlers.py`, for tests that deploy one version of
 * a project after another: each is `manifest` and the stand-in activities (`common.py`,
 * test/fixtures/stand-in-activities) with its own handlers. `dispose` removes them.
 * @example const v = projectVariants(MANIFEST, { v1: "…", v2: "…" }); emu.deploy(v.dirs.v1!);
 */
export function projectVariants(manifest: string, handlers: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "hookline-variants-"));
  const common = readFileSync(COMMON, "utf8");
  const dirs: Record<string, string> = {};
  for (const [name, text] of Object.entries(handlers)) {
    const dir = join(home, name);
    dirs[name] = dir;
    mkdirSync(dir);
    writeFileSync(join(dir, "manifest.yaml"), manifest);
    writeFileSync(join(dir, "common.py"), common);
    writeFileSync(join(dir, "handlers.py"), text);
  }
  return { dirs, dispose: () => rmSync(home, { recursive: true, force: true }) };
}

/**
 * The manifest of such a project: `name`, the STANDIN var (the stand-in API's URL, set by the
 * test), a durable `order` trigger calling `handlers.py:on_order`, and `more` triggers (YAML).
 * @example standInManifest("shop", "  - name: approvals\n    type: webhook\n")
 */
export function standInManifest(name: string, more: string): string {
  const order =
    "  - name: order\n    type: webhook\n    call: handlers.py:on_order\n    is_durable: true\n";
  return `version: v2\nproject:\n  name: ${name}\nvars:\n  - name: STANDIN\n    value: ""\ntriggers:\n${order}${more}`;
}
