// `npm run lint:py` (part of `npm test`): ruff checks and format-checks the repository's Python,
// python-runtime/, examples/ and the kittehub harness's, with the settings of ruff.toml, and py_lengths.py finds its
// functions over 60 lines (STYLE.md; ruff has no rule that counts lines). Without ruff it fails
// in one line that says how to get it (docs/checks.md). RUFF names the binary to use, PYTHON the
// interpreter of the length check.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const PATHS = ["python-runtime", "examples", "test/kittehub", "test/fixtures/kittehub-mini"];
/** The version .ci/run installs; another may format differently, so say which one ran. */
const PINNED = "0.16.9";

/** The command that runs ruff here: RUFF, `ruff` on PATH, else `python3 -m ruff`; or null. */
function findRuff() {
  const candidates = process.env.RUFF
    ? [[process.env.RUFF]]
    : [["ruff"], [process.env.PYTHON ?? "python3", "-m", "ruff"]];
  for (const cmd of candidates) {
    const r = spawnSync(cmd[0], [...cmd.slice(1), "--version"], { encoding: "utf8" });
    if (r.status === 0) return { cmd, version: r.stdout.trim().split(" ")[1] ?? "?" };
  }
  return null;
}

const ruff = findRuff();
if (!ruff) {
  console.error(
    `error: ruff is not installed: npm test lints and formats the Python with it. Install it with ` +
      `"python3 -m pip install --user ruff==${PINNED}" (or "pipx install ruff==${PINNED}"), ` +
      `or name a binary in RUFF=; see docs/checks.md`,
  );
  process.exit(1);
}
if (ruff.version !== PINNED) {
  console.error(`lint:py: ruff ${ruff.version} here, CI runs ${PINNED}: formatting may differ`);
}

let failed = false;
for (const args of [
  ["check", ...PATHS],
  ["format", "--check", ...PATHS],
]) {
  const r = spawnSync(ruff.cmd[0], [...ruff.cmd.slice(1), ...args], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0) failed = true;
}
const lengths = spawnSync(
  process.env.PYTHON ?? "python3",
  [join(import.meta.dirname, "py_lengths.py"), ...PATHS, "bench"],
  { cwd: root, stdio: "inherit" },
);
if (lengths.status !== 0) failed = true;
if (failed) {
  console.error(
    `lint:py: fix the findings above; "ruff format ${PATHS.join(" ")}" fixes the format`,
  );
  process.exit(1);
}
