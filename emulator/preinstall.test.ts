import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexesOf } from "../src/runtime/python/pip-indexes.ts";
import {
  countsAsOffline,
  listRequirements,
  preinstall,
  reasonOf,
  UNREACHABLE_AFTER,
} from "../src/runtime/python/preinstall.ts";
import { repoRoot } from "../test/support/python.ts";
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
      // A progress line first, then one summary line for the pre-install, then "ready".
      expect(progress).toContainEqual(
        expect.stringMatching(/^installing 1\/3 hl-alpha \(\d+ s; once: later starts reuse it\)$/),
      );
      const log = join(venvDir, "preinstall.log");
      const summary = progress.filter((l) => l.startsWith("pre-installed packages:"));
      expect(summary).toEqual([
        expect.stringMatching(
          new RegExp(
            `^pre-installed packages: 2 of 3 installed \\((\\d+ s|\\d+m\\d\\ds)\\); 1 not: not in the package index: hl-beta-missing; pip's first error for each in ${log}; install one later with: `,
          ),
        ),
      ]);
      expect(progress.filter((l) => l.includes("not installed"))).toEqual([]);
      expect(await readFile(log, "utf8")).toContain(
        "hl-beta-missing: not in the package index\n  ERROR: Could not find a version that satisfies the requirement hl-beta-missing",
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

  describe("behind a partial mirror (the default index unreachable, an extra index reachable)", () => {
    /** A PEP 503 index on disk holding `names`, as a company mirror with some packages. */
    async function fileIndex(names: string[]): Promise<string> {
      const root = await mkdtemp(join(tmp, "index-"));
      const wheels = join(root, "wheels");
      await mkdir(wheels);
      for (const name of names) {
        await execa("python3", ["-c", WHEEL_PY, wheels, name]);
        const file = `${name.replace(/-/g, "_")}-1.0-py3-none-any.whl`;
        await mkdir(join(root, "simple", name), { recursive: true });
        await writeFile(
          join(root, "simple", name, "index.html"),
          `<!DOCTYPE html><html><body><a href="../../wheels/${file}">${file}</a></body></html>\n`,
        );
      }
      return `file://${join(root, "simple")}`;
    }

    /** pip as behind a proxy: nothing at the default index (a closed port), the mirror extra. */
    async function withPip<T>(extra: string | null, run: (python: string) => Promise<T>) {
      const venv = await mkdtemp(join(tmp, "venv-"));
      await execa("python3", ["-m", "venv", venv]);
      const saved = { ...process.env };
      process.env.PIP_CONFIG_FILE = "/dev/null"; // not this machine's pip.conf
      delete process.env.PIP_FIND_LINKS; // nor its wheel folder
      process.env.PIP_INDEX_URL = "http://127.0.0.1:9/simple";
      if (extra) process.env.PIP_EXTRA_INDEX_URL = extra;
      try {
        return await run(join(venv, "bin", "python"));
      } finally {
        for (const k of [
          "PIP_CONFIG_FILE",
          "PIP_INDEX_URL",
          "PIP_EXTRA_INDEX_URL",
          "PIP_FIND_LINKS",
        ]) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
      }
    }

    it("a missing first package costs only itself, named with why; the rest install", async () => {
      const index = await fileIndex(["hl-alpha", "hl-gamma", "hl-delta"]);
      const list = join(tmp, "mirror.txt");
      await writeFile(list, "hl-beta-missing\nhl-alpha\nhl-gamma\nhl-delta\n");
      const said: string[] = [];
      await withPip(index, async (python) => {
        const missing = await preinstall(python, list, (l) => said.push(l));
        expect(missing).toEqual(["hl-beta-missing"]);
        const r = await execa(python, ["-c", "import hl_alpha, hl_gamma, hl_delta; print('ok')"]);
        expect(r.stdout).toBe("ok");
      });
      expect(said.at(-1)).toMatch(
        /^pre-installed packages: 3 of 4 installed \((\d+ s|\d+m\d\ds)\); 1 not: not in the package index: hl-beta-missing; install one later with: /,
      );
    }, 180_000);

    it("a mirror that lacks the list's first packages, more than the offline rule counts, is not offline", async () => {
      const index = await fileIndex(["hl-alpha", "hl-gamma"]);
      const list = join(tmp, "mirror-gaps.txt");
      const lacking = ["hl-b1", "hl-b2", "hl-b3", "hl-b4"].slice(0, UNREACHABLE_AFTER + 1);
      // The packages the mirror lacks first: every one it holds is installed all the same.
      await writeFile(list, [...lacking, "hl-alpha", "hl-gamma"].join("\n"));
      const said: string[] = [];
      await withPip(index, async (python) => {
        expect(await preinstall(python, list, (l) => said.push(l))).toEqual(lacking);
        const r = await execa(python, ["-c", "import hl_alpha, hl_gamma; print('ok')"]);
        expect(r.stdout).toBe("ok");
      });
      expect(said.filter((l) => l.includes("no package index reachable"))).toEqual([]);
      expect(said.at(-1)).toMatch(
        /^pre-installed packages: 2 of 6 installed \((\d+ s|\d+m\d\ds)\); 4 not: not in the package index: hl-b1, hl-b2, hl-b3, hl-b4; install/,
      );
    }, 180_000);

    it("counts a failed try as offline only when pip found nothing", () => {
      const refused =
        "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(…)'";
      const notFound = "ERROR: No matching distribution found for hl-b1";
      expect(countsAsOffline(`${refused}\n${notFound}`)).toBe(true);
      expect(
        countsAsOffline(`${refused}\nProcessing /m/hl_alpha-1.0-py3-none-any.whl\n${notFound}`),
      ).toBe(false);
      expect(countsAsOffline(`  Downloading hl_alpha-1.0.whl\n${refused}\n${notFound}`)).toBe(
        false,
      );
      expect(countsAsOffline(notFound)).toBe(false);
    });

    it("with no index at all it stops trying after a few and says so in one line", async () => {
      const list = join(tmp, "offline.txt");
      const names = ["hl-one", "hl-two", "hl-three", "hl-four", "hl-five"];
      await writeFile(list, `${names.join("\n")}\n`);
      const log = join(tmp, "offline.log");
      const said: string[] = [];
      await withPip(null, (python) => preinstall(python, list, (l) => said.push(l), log));
      expect(said.filter((l) => l.startsWith("pre-installed packages:"))).toEqual([
        expect.stringMatching(
          /^pre-installed packages: none of 5 installed \((\d+ s|\d+m\d\ds)\); 5 not: offline: no package index reachable: hl-one, hl-two, hl-three, hl-four, hl-five \(tried http:\/\/127\.0\.0\.1:9\/simple\); pip's first error for each in /,
        ),
      ]);
      const text = await readFile(log, "utf8");
      expect(text.match(/: offline: no package index reachable\n {2}not tried/g)).toHaveLength(
        names.length - UNREACHABLE_AFTER,
      );
    }, 180_000);

    it("says why from pip's output, with pip's first error line", () => {
      const refused =
        "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(...)'";
      const lacks =
        "ERROR: Could not find a version that satisfies the requirement x (from versions: none)\nERROR: No matching distribution found for x";
      expect(reasonOf("x", `${refused}\n${lacks}`, true)).toEqual({
        reason: "not in the package index",
        error:
          "ERROR: Could not find a version that satisfies the requirement x (from versions: none)",
      });
      expect(reasonOf("x", `${refused}\n${lacks}`, false).reason).toBe(
        "offline: no package index reachable",
      );
      expect(reasonOf("x==1", lacks.replaceAll(" x", " y"), true).reason).toBe(
        "needs y, not in the package index",
      );
      expect(
        reasonOf(
          "x",
          "  error: subprocess-exited-with-error\nERROR: Failed building wheel for x",
          true,
        ),
      ).toEqual({ reason: "failed to build", error: "ERROR: Failed building wheel for x" });
      expect(reasonOf("x", "ERROR: ResolutionImpossible: …", true).reason).toBe(
        "conflicting dependencies",
      );
    });

    it("reads the indexes pip is configured with, the environment over pip.conf", () => {
      const list = [
        ":env:.index-url='http://127.0.0.1:9/simple'",
        "global.index-url='https://mirror.example/simple'",
        "global.extra-index-url='file:///opt/pypi/simple file:///opt/more/simple'",
        "global.find-links='/opt/wheels'",
      ].join("\n");
      expect(indexesOf(list)).toEqual([
        "http://127.0.0.1:9/simple",
        "file:///opt/pypi/simple",
        "file:///opt/more/simple",
        "/opt/wheels",
      ]);
      expect(indexesOf("")).toEqual(["https://pypi.org/simple"]);
      expect(indexesOf(":env:.no-index='1'\n:env:.find-links='/w'")).toEqual(["/w"]);
    });
  });
});
