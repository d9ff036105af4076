/** A Python function name (ASCII; the build step checks the function really exists). */
const FUNCTION = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * What is wrong with a trigger's `call` (`<relative/path.py>:<function>`), or null when nothing is.
 * The path must stay inside the project folder: no absolute path, no `..`, no drive or backslash.
 * @example callProblem("../x.py:on_event") // '".." is not allowed in the path'
 */
export function callProblem(call: string): string | null {
  const colon = call.lastIndexOf(":");
  if (colon < 0) return `expected "<relative/path.py>:<function>", got "${call}"`;
  const [path, fn] = [call.slice(0, colon), call.slice(colon + 1)];
  if (!FUNCTION.test(fn)) return `"${fn}" is not a Python function name`;
  if (path.includes("\\")) return `use "/" in the path, not "\\"`;
  if (path.startsWith("/") || path.includes(":")) {
    return `the path must be relative to the project folder`;
  }
  if (path.split("/").includes("..")) return `".." is not allowed in the path`;
  if (!path.endsWith(".py") || path.endsWith("/.py")) return `the file must be a ".py" file`;
  return null;
}

/**
 * Drops `.` and empty path segments so `./a//b.py:f` and `a/b.py:f` name the same build file.
 * @example normalizeCall("./handlers/main.py:on_event") // "handlers/main.py:on_event"
 */
export function normalizeCall(call: string): string {
  const colon = call.lastIndexOf(":");
  const path = call
    .slice(0, colon)
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .join("/");
  return `${path}${call.slice(colon)}`;
}
