import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installRequirements, isEmptyRequirements } from "../src/runtime/python/pip.ts";
import { checkWorkerPython, compareVersions, isSupported } from "../src/runtime/python/python.ts";
import { createPythonRuntime } from "../src/runtime/python/runtime.ts";
import { repoRoot, testPython } from "../test/support/python.ts";
import { ensureVenv, findBasePython, repoSdkVersion } from "./venv.ts";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "hl-py-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A stand-in interpreter that claims `version` and has no workflow_sdk. */
async function fakePython(version: string): Promise<string> {
  const path = join(tmp, `python${version}`);
  await writeFile(
    path,
    `#!/bin/sh\nif [ "$1" = "-c" ]; then echo ${version}; exit 0; fi\necho "No module named workflow_sdk" >&2\nexit 1\n`,
  );
  await chmod(path, 0o755);
  return path;
}

describe("versions", () => {
  it("compares dotted versions numerically", () => {
    expect(compareVersions("0.10.0", "0.9.1")).toBe(1);
    expect(compareVersions("3.11", "3.11.0")).toBe(0);
    expect(compareVersions("3.9.18", "3.11")).toBe(-1);
    expect(isSupported("3.11.7")).toBe(true);
    expect(isSupported("3.13.0")).toBe(true);
    expect(isSupported("3.10.12")).toBe(false);
  });

  it("reads the SDK version from python-runtime/pyproject.toml", async () => {
    expect(await repoSdkVersion(join(repoRoot, "python-runtime"))).toMatch(/^\d+\.\d+/);
  });
});

describe("SVC_WORKER_PYTHON", () => {
  it("accepts a Python that imports workflow_sdk", async () => {
    const python = await testPython();
    expect(await checkWorkerPython(python, repoRoot)).toBe(python);
  }, 180_000);

  it("refuses a Python that is too old", async () => {
    const old = await fakePython("3.9.18");
    await expect(checkWorkerPython(old, repoRoot)).rejects.toMatchObject({
      code: "unavailable",
      message: `SVC_WORKER_PYTHON=${old}: Python 3.9 is too old, 3.11 or newer is needed`,
    });
  });

  it("refuses a Python without workflow_sdk and says how to install it", async () => {
    const bare = await fakePython("3.12.1");
    await expect(checkWorkerPython(bare, repoRoot)).rejects.toThrow(
      `SVC_WORKER_PYTHON=${bare}: cannot import workflow_sdk (No module named workflow_sdk): install it with pip install ${repoRoot}/python-runtime`,
    );
  });

  it("refuses a path that does not run, and the runtime's sessions end with that error", async () => {
    const missing = join(tmp, "no-such-python");
    await expect(checkWorkerPython(missing, repoRoot)).rejects.toThrow(
      new RegExp(`^SVC_WORKER_PYTHON=${missing}: cannot be run`),
    );
    const runtime = createPythonRuntime({
      dataHome: tmp,
      python: () => checkWorkerPython(missing, repoRoot),
    });
    await expect(runtime.python()).rejects.toThrow(/cannot be run/);
    await runtime.dispose();
  });
});

describe("the venv", () => {
  it("finds python3 before python on PATH", async () => {
    const dir = join(tmp, "bin");
    await rm(dir, { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(dir));
    for (const name of ["python", "python3"]) {
      await writeFile(join(dir, name), "#!/bin/sh\n");
      await chmod(join(dir, name), 0o755);
    }
    expect(await findBasePython(`/nonexistent:${dir}`)).toBe(join(dir, "python3"));
    await expect(findBasePython("/nonexistent")).rejects.toThrow(/no python3 or python on PATH/);
  });

  it("is created once under the data home, reused, and installs requirements.txt", async () => {
    const dataHome = join(tmp, "home");
    const progress: string[] = [];
    const venvDir = join(dataHome, "venv");
    // preinstall: false: with this machine's partial mirror, the real list would now install
    // package by package for minutes; preinstall.test.ts tests the pre-install with local indexes.
    const runtime = createPythonRuntime({
      dataHome,
      python: () =>
        ensureVenv({
          venvDir,
          repoRoot,
          preinstall: false,
          onProgress: (line) => progress.push(line),
        }),
      pip: {
        onProgress: (line) => progress.push(line),
        pipArgs: ["--index-url", "http://127.0.0.1:9/", "--retries", "0"],
      },
    });
    const t0 = performance.now();
    const [python, same] = await Promise.all([runtime.python(), runtime.python()]);
    console.log(`venv created in ${Math.round(performance.now() - t0)} ms`);
    expect(python).toBe(join(dataHome, "venv", "bin", "python"));
    expect(same).toBe(python);
    expect(progress[0]).toMatch(/^creating the Python environment at .*venv from .*python/);
    expect(progress.at(-1)).toBe(`Python environment ready: ${python}`);
    expect(
      JSON.parse(await readFile(join(dataHome, "venv", ".hookline.json"), "utf8")),
    ).toMatchObject({
      sdk: await repoSdkVersion(join(repoRoot, "python-runtime")),
    });

    // A second runtime (a restart) reuses it.
    const again: string[] = [];
    const t1 = performance.now();
    const later = createPythonRuntime({
      dataHome,
      python: () => ensureVenv({ venvDir, repoRoot, onProgress: (l) => again.push(l) }),
    });
    expect(await later.python()).toBe(python);
    console.log(`venv reused in ${Math.round(performance.now() - t1)} ms`);
    // Never created again (workflow_sdk is reinstalled only when python-runtime has changed).
    expect(again.filter((l) => l.startsWith("creating"))).toEqual([]);

    const files = (requirements: string) => ({
      id: `bld_req_${Buffer.from(requirements).toString("hex").slice(0, 16)}`,
      files: {
        "h.py": Buffer.from("def on_post(event):\n    pass\n").toString("base64"),
        "requirements.txt": Buffer.from(requirements).toString("base64"),
      },
    });
    // Satisfied already (workflow-sdk is installed) and comments: no index needed.
    await runtime.check(files("# tools\nworkflow-sdk\n"), ["h.py:on_post"]);
    await expect(
      runtime.check(files("surely-not-a-package-hookline==1.0\n"), ["h.py:on_post"]),
    ).rejects.toMatchObject({
      code: "unprocessable",
      message: expect.stringMatching(
        /^requirements.txt: pip failed:\n[\s\S]*surely-not-a-package-hookline/,
      ),
    });
    await Promise.all([runtime.dispose(), later.dispose()]);
  }, 180_000);
});

describe("installRequirements", () => {
  it("skips a file with nothing in it", async () => {
    expect(isEmptyRequirements("\n# only a comment\n  \n")).toBe(true);
    expect(isEmptyRequirements("requests\n")).toBe(false);
    await installRequirements("/nonexistent/python", "# nothing\n");
  });

  it("never hands pip a line naming the service's SDK (nothing else left: pip is not run)", async () => {
    await installRequirements("/nonexistent/python", "autokitteh>=0.5\nworkflow_sdk==99.0.0\n");
    await expect(
      installRequirements("/nonexistent/python", "autokitteh\nrequests\n"),
    ).rejects.toMatchObject({ code: "unprocessable" });
  });
});
