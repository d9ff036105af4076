import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../test/support/python.ts";
import { listRequirements } from "./preinstall.ts";
import { ensureVenv } from "./venv.ts";

/**
 * The pre-installed packages from a local index (PyPI is not reachable here): a folder of
 * wheels built from tiny standard-library packages, which pip reads through PIP_NO_INDEX and
 * PIP_FIND_LINKS as it would from any configured index. One listed package is not in it.
 */
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "hl-preinstall-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Builds `<name>-1.0-py3-none-any.whl` holding a module that says its name. */
const WHEEL_PY = `
import sys, zipfile
folder, name = sys.argv[1], sys.argv[2]
module = name.replace("-", "_")
dist = f"{module}-1.0.dist-info"
with zipfile.ZipFile(f"{folder}/{module}-1.0-py3-none-any.whl", "w") as z:
    z.writestr(f"{module}/__init__.py", f"NAME = {name!r}\\n")
    z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n")
    z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\\nGenerator: hookline-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr(f"{dist}/RECORD", "")
`;

describe("pre-installed packages", () => {
  it("reads a list without comments and blanks", () => {
    expect(listRequirements("# tools\nrequests\n\nPyYAML  # yaml\n  httpx==0.27\n")).toEqual([
      "requests",
      "PyYAML",
      "httpx==0.27",
    ]);
  });

  it("installs each one the index has, names each one it lacks, and config where lists them", async () => {
    const wheels = join(tmp, "wheels");
    await mkdir(wheels);
    for (const name of ["hl-alpha", "hl-gamma"]) {
      await execa("python3", ["-c", WHEEL_PY, wheels, name]);
    }
    const list = join(tmp, "preinstalled.txt");
    await writeFile(
      list,
      "# as python-runtime/preinstalled.txt\nhl-alpha\nhl-beta-missing\nhl-gamma\n",
    );
    process.env.PIP_NO_INDEX = "1";
    process.env.PIP_FIND_LINKS = wheels;
    const xdg = join(tmp, "xdg");
    const venvDir = join(xdg, "hookline", "venv");
    const progress: string[] = [];
    try {
      const python = await ensureVenv({
        venvDir,
        repoRoot,
        preinstalledFile: list,
        onProgress: (line) => progress.push(line),
      });
      const named = progress.filter((l) => l.includes("hl-beta-missing"));
      expect(named).toEqual([
        'pre-installed package "hl-beta-missing" not installed: not found in the package index',
      ]);
      expect(progress.filter((l) => /hl-alpha|hl-gamma/.test(l))).toEqual([]);
      expect(progress).toContainEqual(
        expect.stringMatching(/^pre-installed packages: 2 installed, 1 not /),
      );
      const r = await execa(python, [
        "-c",
        "import hl_alpha, hl_gamma; print(hl_alpha.NAME, hl_gamma.NAME)",
      ]);
      expect(r.stdout).toBe("hl-alpha hl-gamma");

      const where = await execa("node", [join(repoRoot, "bin/cli.mjs"), "config", "where"], {
        env: { XDG_DATA_HOME: xdg },
      });
      expect(where.stdout.split("\n")).toContain(
        "pre-installed packages not installed: hl-beta-missing",
      );
    } finally {
      delete process.env.PIP_NO_INDEX;
      delete process.env.PIP_FIND_LINKS;
    }
  }, 180_000);
});
