import { HooklineError } from "../errors.ts";
import type { BuildFiles } from "../model/records.ts";

// The entry points a build offers, read from its Python files as text: what `start()` and a
// manual run may call, and what the web UI's Run form lists. A textual reading, so a call is
// refused before a session exists rather than failing in it; a function bound any other way
// (`name = make()`) is not seen.

const LOC = /^([^:]+\.py):([A-Za-z_][A-Za-z0-9_]*)$/;
const TOP_LEVEL_DEF = /^(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(/gm;

/**
 * The names of the top-level functions (`def` or `async def` at column 0) of a Python source,
 * in the order they are defined, each once.
 * @example topLevelFunctions("def a(e):\n    def b(): pass\nasync def c(e): pass\n") // ["a", "c"]
 */
export function topLevelFunctions(source: string): string[] {
  return [...new Set([...source.matchAll(TOP_LEVEL_DEF)].map((m) => m[1]!))];
}

/**
 * Every `.py` file of a build with its top-level functions, files sorted by path, files without
 * any left out.
 * @example entryPoints(build) // [{ file: "program.py", functions: ["on_manual_run"] }]
 */
export function entryPoints(build: BuildFiles): { file: string; functions: string[] }[] {
  return Object.keys(build.files)
    .filter((f) => f.endsWith(".py"))
    .sort()
    .map((file) => ({ file, functions: topLevelFunctions(pyText(build, file)) }))
    .filter((e) => e.functions.length > 0);
}

const pyText = (build: BuildFiles, file: string) =>
  Buffer.from(build.files[file] ?? "", "base64").toString("utf8");

/**
 * Refuses (400) a `<file.py>:<function>` the build cannot run: malformed, no such file, or no
 * such top-level function. `what` names the caller in the message (`start`, `entrypoint`).
 * @example checkLoc("program.py:nope", build, "entrypoint") // throws: entrypoint: program.py has no top-level function nope
 */
export function checkLoc(loc: string, build: BuildFiles, what = "start"): void {
  const m = LOC.exec(loc);
  if (!m) {
    const name = what === "start" ? "loc" : what;
    throw new HooklineError(
      "bad_request",
      `${what}: ${name} must be <file.py>:<function>, got "${loc}"`,
    );
  }
  const [, path, fn] = m as unknown as [string, string, string];
  const file = path.replace(/^\.\//, "");
  if (build.files[file] === undefined) {
    throw new HooklineError("bad_request", `${what}: no file ${path} in this project's deployment`);
  }
  if (!topLevelFunctions(pyText(build, file)).includes(fn)) {
    throw new HooklineError("bad_request", `${what}: ${path} has no top-level function ${fn}`);
  }
}
