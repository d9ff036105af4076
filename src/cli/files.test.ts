import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { collectFiles } from "./files.ts";

let tmp: string;
let project: string;

async function put(path: string, content = "x"): Promise<void> {
  await mkdir(dirname(join(tmp, path)), { recursive: true });
  await writeFile(join(tmp, path), content);
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "hookline-cli-"));
  project = join(tmp, "demo");
  await put("demo/manifest.yaml", "version: v2");
  await put("demo/handlers.py", "def on_hook(event): pass\n");
  await put("demo/lib/util.py", "X = 1\n");
  await put("demo/requirements.txt", "requests\n");
  await put("demo/.env", "SECRET=1");
  await put("demo/.git/config", "x");
  await put("demo/__pycache__/handlers.cpython-312.pyc", "x");
  await put("demo/lib/__pycache__/util.pyc", "x");
  await put("demo/node_modules/a/index.js", "x");
  await put("outside.py", "print('outside')\n");
});

afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("collectFiles", () => {
  it("takes the folder, skipping dot files, __pycache__, node_modules and the manifest", async () => {
    const files = await collectFiles({ root: project, manifest: join(project, "manifest.yaml") });
    expect(Object.keys(files).sort()).toEqual(["handlers.py", "lib/util.py", "requirements.txt"]);
    expect(files["handlers.py"]).toBe(b64("def on_hook(event): pass\n"));
  });

  it("never follows a link out of the folder, but follows one that stays inside", async () => {
    await symlink(join(tmp, "outside.py"), join(project, "escape.py"));
    await symlink(tmp, join(project, "up"));
    await symlink(join(project, "lib"), join(project, "again"));
    await symlink(join(project, "missing.py"), join(project, "dangling.py"));
    await symlink(join(project, "handlers.py"), join(project, "alias.py"));
    const files = await collectFiles({ root: project, manifest: join(project, "manifest.yaml") });
    expect(Object.keys(files).sort()).toEqual([
      "alias.py",
      "handlers.py",
      "lib/util.py",
      "requirements.txt",
    ]);
  });

  it("takes exactly the --files, relative to the cwd or else to the folder", async () => {
    const files = await collectFiles({
      root: project,
      manifest: join(project, "manifest.yaml"),
      files: ["demo/handlers.py", "lib/util.py"],
      cwd: tmp,
    });
    expect(Object.keys(files).sort()).toEqual(["handlers.py", "lib/util.py"]);
  });

  it("takes a --file folder with the usual skips", async () => {
    const files = await collectFiles({
      root: project,
      manifest: join(project, "manifest.yaml"),
      files: ["lib"],
      cwd: project,
    });
    expect(Object.keys(files)).toEqual(["lib/util.py"]);
  });

  it("refuses a --file outside the folder, also through a link", async () => {
    const base = { root: project, manifest: join(project, "manifest.yaml"), cwd: project };
    await expect(collectFiles({ ...base, files: ["../outside.py"] })).rejects.toThrow(
      "../outside.py is outside the project folder",
    );
    await symlink(join(tmp, "outside.py"), join(project, "escape.py"));
    await expect(collectFiles({ ...base, files: ["escape.py"] })).rejects.toThrow(
      "escape.py is outside the project folder",
    );
    await expect(collectFiles({ ...base, files: ["nope.py"] })).rejects.toThrow(
      "cannot read nope.py: no such file",
    );
  });

  it("refuses more than the size limit, naming it", async () => {
    await put("demo/big.bin", "y".repeat(2048));
    const base = { root: project, manifest: join(project, "manifest.yaml") };
    await expect(collectFiles({ ...base, maxBytes: 1024 * 1024 })).resolves.toBeDefined();
    await expect(collectFiles({ ...base, maxBytes: 2048 })).rejects.toThrow(/limit/);
  });

  it("has a 16 MiB limit by default", async () => {
    await writeFile(join(project, "huge.bin"), Buffer.alloc(16 * 1024 * 1024 + 1));
    await expect(
      collectFiles({ root: project, manifest: join(project, "manifest.yaml") }),
    ).rejects.toThrow("larger than the 16 MiB limit");
  });
});
