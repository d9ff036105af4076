import { randomBytes } from "node:crypto";
import { access, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { HooklineError } from "../../errors.ts";
import type { BuildFiles } from "../../model/records.ts";
import { safePath } from "../../paths.ts";
import { lastLine, tail } from "./python.ts";

export { safePath };

const materialized = new Map<string, Promise<string>>();

/**
 * Writes a build's files to `<dataHome>/builds/<build_id>/` once and resolves to that folder.
 * Builds never change, so an existing folder is reused; a new one is written beside it and
 * renamed into place, so a reader never sees half a build.
 * @example const dir = await materializeBuild("/data", { id: "bld_…", files: { "a.py": "…" } });
 */
export function materializeBuild(dataHome: string, build: BuildFiles): Promise<string> {
  let dir: string;
  try {
    dir = join(dataHome, "builds", safeBuildId(build.id));
  } catch (e) {
    return Promise.reject(e);
  }
  let p = materialized.get(dir);
  if (!p) {
    p = write(dir, build).catch((e: unknown) => {
      materialized.delete(dir);
      throw e;
    });
    materialized.set(dir, p);
  }
  return p;
}

async function write(dir: string, build: BuildFiles): Promise<string> {
  const files = Object.entries(build.files).map(
    ([path, content]) => [safePath(path), content] as const,
  );
  if (
    await access(dir).then(
      () => true,
      () => false,
    )
  )
    return dir;
  const tmp = `${dir}.tmp-${randomBytes(6).toString("hex")}`;
  try {
    for (const [path, content] of files) {
      const file = join(tmp, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, Buffer.from(content, "base64"));
    }
    await mkdir(tmp, { recursive: true });
    await rename(tmp, dir).catch((e: NodeJS.ErrnoException) => {
      // Another process wrote the same build first: theirs is as good as ours.
      if (e.code !== "ENOTEMPTY" && e.code !== "EEXIST") throw e;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return dir;
}

function safeBuildId(id: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id))
    throw new HooklineError("bad_request", `bad build id "${id}"`);
  return id;
}

/**
 * `python -m workflow_sdk.runner check`: every `.py` compiles and every call names a top-level
 * function of its file. Rejects with HooklineError("unprocessable") carrying Python's errors.
 * @example await checkBuild(python, "/data/builds/bld_…", ["handlers.py:on_post"]);
 */
export async function checkBuild(python: string, dir: string, calls: string[]): Promise<void> {
  const args = ["-m", "workflow_sdk.runner", "check", "--dir", dir];
  for (const call of calls) args.push("--call", call);
  const r = await execa(python, args, { reject: false, timeout: 120_000, stdin: "ignore" });
  const result = parseJson(lastLine(r.stdout)) as { ok?: unknown; errors?: unknown } | null;
  if (result?.ok === true) return;
  if (result?.ok === false && Array.isArray(result.errors)) {
    throw new HooklineError("unprocessable", result.errors.map(String).join("\n"));
  }
  throw new HooklineError(
    "internal",
    `the build check did not run: ${tail(r.stderr) || r.shortMessage || lastLine(r.stdout)}`,
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
