import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { HooklineError } from "../../src/errors.ts";
import { pip } from "./pip.ts";
import { tail } from "./python.ts";

/**
 * Copies the packages into site-packages with a minimal `.dist-info` (so `pip list` shows it and
 * `pip uninstall` removes it). Standard library only: needs no build backend and no network.
 */
const COPY_INSTALL = `
import base64, hashlib, os, shutil, sys, sysconfig
src, version, names = sys.argv[1], sys.argv[2], sys.argv[3:]
site = sysconfig.get_paths()["purelib"]
for entry in os.listdir(site):
    if entry.lower().replace("-", "_").startswith("workflow_sdk_") and entry.endswith((".dist-info", ".egg-info")):
        shutil.rmtree(os.path.join(site, entry), ignore_errors=True)
files = []
for name in names:
    dest = os.path.join(site, name)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(os.path.join(src, name), dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for root, _, fs in os.walk(dest):
        files += [os.path.join(root, f) for f in fs]
dist = os.path.join(site, f"workflow_sdk-{version}.dist-info")
os.makedirs(dist)
meta = {"METADATA": f"Metadata-Version: 2.1\\nName: workflow-sdk\\nVersion: {version}\\n",
        "INSTALLER": "hookline\\n", "top_level.txt": "".join(n + "\\n" for n in names)}
for fname, text in meta.items():
    with open(os.path.join(dist, fname), "w") as f:
        f.write(text)
    files.append(os.path.join(dist, fname))
rows = []
for path in files:
    data = open(path, "rb").read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    rows.append(f"{os.path.relpath(path, site)},sha256={digest},{len(data)}")
rows.append(os.path.relpath(os.path.join(dist, "RECORD"), site) + ",,")
with open(os.path.join(dist, "RECORD"), "w") as f:
    f.write("\\n".join(rows) + "\\n")
`;

/**
 * Installs `workflow_sdk` from `runtimeDir` into `python`'s environment, with no network:
 * `pip install --no-index --no-build-isolation --no-deps`, and when that cannot build (a fresh
 * venv has setuptools without \`wheel\`, or no setuptools at all from Python 3.12 on) a plain copy.
 * @example await installSdk("/data/venv/bin/python", "/src/python-runtime", "0.1.0", console.error);
 */
export async function installSdk(
  python: string,
  runtimeDir: string,
  version: string,
  say: (line: string) => void,
): Promise<void> {
  try {
    await pip(python, [
      "--no-index",
      "--no-build-isolation",
      "--no-deps",
      "--force-reinstall",
      runtimeDir,
    ]);
    return;
  } catch (e) {
    say(
      `pip could not build workflow_sdk offline (${lastError((e as Error).message)}); copying it instead`,
    );
  }
  const names = await packageNames(runtimeDir);
  const r = await execa(python, ["-c", COPY_INSTALL, runtimeDir, version, ...names], {
    all: true,
    reject: false,
  });
  if (r.failed) {
    throw new HooklineError(
      "unavailable",
      `installing workflow_sdk failed:\n${tail(String(r.all))}`,
    );
  }
}

/** Top-level packages of the project: folders with an `__init__.py`, tests aside. */
async function packageNames(runtimeDir: string): Promise<string[]> {
  const names: string[] = [];
  for (const e of await readdir(runtimeDir, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name === "tests" || e.name.startsWith(".")) continue;
    const inner = await readdir(join(runtimeDir, e.name));
    if (inner.includes("__init__.py")) names.push(e.name);
  }
  return names;
}

function lastError(output: string): string {
  const lines = output.split("\n").filter((l) => /error/i.test(l));
  return (
    lines.find((l) => /invalid command|No module named/.test(l)) ??
    lines.at(-1) ??
    "failed"
  ).trim();
}
