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

/** What a top-level function is to the Run form. */
export type FunctionKind = "entry" | "helper" | "activity";

const DEF_WITH_PARAMS = /^(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^)]*)\)/gm;
/** A first parameter that takes an event: `event`, `e`, `evt`, `ev`, or one typed `Event`. */
const EVENT_PARAM = /^\s*(?:event|evt|ev|e)\s*(?::|,|=|$)|:\s*(?:[\w.]+\.)?Event\b/;

/**
 * A build's top-level functions sorted into entry points (a trigger calls it, or its first
 * parameter takes an event), activities (decorated `@activity` or `@….activity(…)`) and
 * helpers (the rest), per file. A textual reading, as `entryPoints`.
 * @example functionKinds(build, ["program.py:on_hook"]) // [{ file: "program.py", functions: [{ name: "on_hook", kind: "entry" }] }]
 */
export function functionKinds(
  build: BuildFiles,
  calls: string[],
): { file: string; functions: { name: string; kind: FunctionKind }[] }[] {
  const called = new Set(calls);
  return entryPoints(build).map(({ file }) => {
    const source = pyText(build, file);
    const seen = new Map<string, FunctionKind>();
    for (const m of source.matchAll(DEF_WITH_PARAMS)) {
      const name = m[1]!;
      if (seen.has(name)) continue;
      const above = source.slice(0, m.index).split("\n").slice(0, -1);
      const decorators: string[] = [];
      for (let i = above.length - 1; i >= 0 && above[i]!.startsWith("@"); i--) {
        decorators.push(above[i]!);
      }
      const kind: FunctionKind = called.has(`${file}:${name}`)
        ? "entry"
        : decorators.some((d) => /^@(?:[\w.]+\.)?activity\b/.test(d))
          ? "activity"
          : EVENT_PARAM.test(m[2]!.split(",")[0]!)
            ? "entry"
            : "helper";
      seen.set(name, kind);
    }
    return { file, functions: [...seen].map(([name, kind]) => ({ name, kind })) };
  });
}
