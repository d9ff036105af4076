import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { access, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { execa } from "execa";
import { HooklineError } from "../src/errors.ts";
import { preinstall } from "../src/runtime/python/preinstall.ts";
import { ticking } from "../src/runtime/python/progress.ts";
import {
  compareVersions,
  interpreterVersion,
  isSupported,
  sdkVersion,
  tail,
  tooOld,
} from "../src/runtime/python/python.ts";
import { withDirLock } from "./lock.ts";
import { installSdk } from "./sdk-install.ts";

export interface VenvOptions {
  /** Where the environment lives, e.g. `<dataHome>/venv`. */
  venvDir: string;
  /** The repository root; `workflow_sdk` is installed from `<repoRoot>/python-runtime`. */
  repoRoot: string;
  /** Python to create the environment from; default the first `python3`, else `python`, on PATH. */
  basePython?: string;
  /** Install `python-runtime/preinstalled.txt` too (each package pip cannot get is named). */
  preinstall?: boolean;
  /** The list of pre-installed packages; default `<repoRoot>/python-runtime/preinstalled.txt`. */
  preinstalledFile?: string;
  onProgress?: (line: string) => void;
}

/**
 * `<venv>/.hookline.json`: what the environment was last set up from (reinstall `workflow_sdk`
 * when it changes), and the pre-installed packages pip could not install (`cli config where`).
 */
interface Marker {
  sdk: string;
  source: string;
  preinstall_missing?: string[];
}

const building = new Map<string, Promise<string>>();

/**
 * Creates the environment once (later calls reuse it) and keeps its `workflow_sdk` as new as the
 * repository's. Resolves to the environment's `python`. Safe to call concurrently, in one process
 * or several.
 * @example const python = await ensureVenv({ venvDir: "/data/venv", repoRoot: "/src/hookline" });
 */
export function ensureVenv(options: VenvOptions): Promise<string> {
  let p = building.get(options.venvDir);
  if (!p) {
    p = setUp(options).finally(() => building.delete(options.venvDir));
    building.set(options.venvDir, p);
  }
  return p;
}

async function setUp(o: VenvOptions): Promise<string> {
  const python = join(o.venvDir, "bin", "python");
  const markerFile = join(o.venvDir, ".hookline.json");
  const runtimeDir = join(o.repoRoot, "python-runtime");
  const wanted: Marker = {
    sdk: await repoSdkVersion(runtimeDir),
    source: await hashTree(runtimeDir),
  };
  const readMarker = () =>
    readFile(markerFile, "utf8").then(
      (t) => JSON.parse(t) as Marker,
      () => null,
    );
  const current = async () => {
    const marker = await readMarker();
    if (marker?.source !== wanted.source || !(await exists(python))) return false;
    // Someone may have pip-installed another workflow_sdk into it since.
    const installed = await sdkVersion(python);
    return "sdk" in installed && compareVersions(installed.sdk, wanted.sdk) >= 0;
  };
  if (await current()) return python;
  await mkdir(dirname(o.venvDir), { recursive: true });
  return withDirLock(`${o.venvDir}.lock`, async () => {
    if (await current()) return python;
    const say = o.onProgress ?? (() => {});
    // A venv cut short (the service killed while making it) may lack pip: make it again.
    const working = (await exists(python)) && (await runs(python, "import pip"));
    if (!working) await makeVenv(o, say);
    // Here the environment is new, or its workflow_sdk is older than (or differs from) the
    // repository's: install it again, from the repository, with no network.
    say(`installing workflow_sdk ${wanted.sdk} from ${runtimeDir}`);
    await ticking(say, "installing workflow_sdk", installSdk(python, runtimeDir));
    const preinstalled = o.preinstalledFile ?? join(runtimeDir, "preinstalled.txt");
    // Kept from the last set-up when this one only reinstalls workflow_sdk.
    let missing = working ? ((await readMarker())?.preinstall_missing ?? []) : [];
    if (!working && o.preinstall !== false && (await exists(preinstalled))) {
      missing = await preinstall(python, preinstalled, say, join(o.venvDir, "preinstall.log"));
    }
    const check = await sdkVersion(python);
    if (!("sdk" in check)) {
      throw new HooklineError(
        "unavailable",
        `${python} cannot import workflow_sdk: ${check.error}`,
      );
    }
    const marker: Marker = { sdk: check.sdk, source: wanted.source, preinstall_missing: missing };
    await writeFile(markerFile, JSON.stringify(marker));
    say(`Python environment ready: ${python}`);
    return python;
  });
}

/** A new environment at `o.venvDir` from the base Python, saying how long it has taken so far. */
async function makeVenv(o: VenvOptions, say: (line: string) => void): Promise<void> {
  const base = o.basePython ?? (await findBasePython());
  const version = await interpreterVersion(base);
  if (version === null) throw new HooklineError("unavailable", `cannot run ${base}`);
  if (!isSupported(version)) throw new HooklineError("unavailable", `${base}: ${tooOld(version)}`);
  say(
    `creating the Python environment at ${o.venvDir} from ${base} (Python ${version}), once: later starts reuse it`,
  );
  await rm(o.venvDir, { recursive: true, force: true });
  const r = await ticking(
    say,
    "creating the Python environment",
    execa(base, ["-m", "venv", o.venvDir], { all: true, reject: false }),
  );
  if (r.failed) {
    throw new HooklineError(
      "unavailable",
      `${base} -m venv ${o.venvDir} failed:\n${tail(String(r.all))}`,
    );
  }
}

/** The first `python3`, else `python`, on PATH. */
export async function findBasePython(path = process.env.PATH ?? ""): Promise<string> {
  for (const name of ["python3", "python"]) {
    for (const dir of path.split(delimiter)) {
      if (!dir) continue;
      const candidate = join(dir, name);
      if (await exists(candidate, constants.X_OK)) return candidate;
    }
  }
  throw new HooklineError(
    "unavailable",
    "no python3 or python on PATH: install Python 3.11 or newer, or set SVC_WORKER_PYTHON",
  );
}

/** `version` from python-runtime/pyproject.toml. */
export async function repoSdkVersion(runtimeDir: string): Promise<string> {
  const text = await readFile(join(runtimeDir, "pyproject.toml"), "utf8");
  const m = /^\s*version\s*=\s*"([^"]+)"/m.exec(text);
  if (!m?.[1]) throw new Error(`${runtimeDir}/pyproject.toml has no version`);
  return m[1];
}

/** A hash of the package's sources, so an edited checkout reinstalls without a version bump. */
async function hashTree(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(dir, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (e.name.startsWith(".") || /^(__pycache__|build|dist|tests)$|\.egg-info$/.test(e.name))
        continue;
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path);
      else if (e.isFile() && !e.name.endsWith(".pyc")) {
        hash.update(`${path}\0`);
        hash.update(await readFile(join(dir, path)));
      }
    }
  };
  await walk("");
  return hash.digest("hex");
}

async function runs(python: string, code: string): Promise<boolean> {
  const r = await execa(python, ["-c", code], { reject: false, timeout: 60_000 });
  return !r.failed;
}

async function exists(path: string, mode = constants.F_OK): Promise<boolean> {
  return access(path, mode).then(
    () => true,
    () => false,
  );
}
