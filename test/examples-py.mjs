// `npm run test:examples`: runs each example's test_handlers.py (workflow_sdk.testing) with
// `python3 -m unittest`. Fails if any example lacks the file, runs no test, or has a failing one.
// Usage: node test/examples-py.mjs [example ...]   (default: every folder in examples/)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";

const root = join(import.meta.dirname, "..");
const examplesDir = join(root, "examples");
const python = process.env.PYTHON ?? "python3";
const env = {
  ...process.env,
  PYTHONPATH: [join(root, "python-runtime"), process.env.PYTHONPATH]
    .filter(Boolean)
    .join(delimiter),
  PYTHONDONTWRITEBYTECODE: "1",
};

const names = process.argv.slice(2).length
  ? process.argv.slice(2)
  : readdirSync(examplesDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();

const failed = [];
for (const name of names) {
  const dir = join(examplesDir, name);
  if (!existsSync(join(dir, "test_handlers.py"))) {
    console.error(
      `examples/${name}: no test_handlers.py (every example has one; see docs/testing.md)`,
    );
    failed.push(name);
    continue;
  }
  const args = ["-m", "unittest", "discover", "-s", dir, "-t", dir, "-p", "test_handlers.py"];
  const run = spawnSync(python, args, { cwd: root, env, encoding: "utf8" });
  const output = `${run.stdout ?? ""}${run.stderr ?? ""}`;
  const ran = /^Ran (\d+) tests?/m.exec(output);
  const ok = run.status === 0 && ran !== null && Number(ran[1]) > 0;
  if (!ok) {
    process.stderr.write(output || `${run.error ?? "no output"}\n`);
    failed.push(name);
  }
  const status = ok ? `ok (${ran[1]} tests)` : ran?.[1] === "0" ? "no tests" : "FAILED";
  console.log(`examples/${name}: ${status}`);
}
if (failed.length) {
  console.error(`test:examples: ${failed.length} of ${names.length} failed: ${failed.join(", ")}`);
  process.exit(1);
}
console.log(`test:examples: ${names.length} examples ok`);
