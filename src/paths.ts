import { posix } from "node:path";
import { HooklineError } from "./errors.ts";

/**
 * A project-relative path, normalised; refuses anything that could leave the project's folder
 * (absolute, `..`, backslashes, NUL). Used where files arrive (deploy) and where they are
 * written (builds).
 * @example safePath("./pkg//mod.py") // "pkg/mod.py"
 */
export function safePath(path: string): string {
  const bad = (why: string) => new HooklineError("bad_request", `build file "${path}": ${why}`);
  if (path.includes("\0")) throw bad("contains NUL");
  if (path.includes("\\")) throw bad("contains a backslash");
  if (path.startsWith("/")) throw bad("is absolute");
  const parts = path.split("/");
  if (parts.includes("..")) throw bad('contains ".."');
  const normal = posix.normalize(path);
  if (normal === "." || normal === "" || normal.endsWith("/")) throw bad("names no file");
  return normal;
}
