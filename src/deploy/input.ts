import * as v from "valibot";
import { HooklineError } from "../errors.ts";
import { type Manifest, ManifestError, parseManifest } from "../manifest/index.ts";
import { safePath } from "../paths.ts";
import { Base64 } from "../wire/checks.ts";

/** Everything one deploy may upload. */
export const MAX_BUILD_BYTES = 16 * 1024 * 1024;

/**
 * The body of `POST /api/v1/deploy`: the manifest's text and the project's files. The route
 * validates with it and the OpenAPI document is generated from it.
 */
export const DeployInputSchema = v.object({
  manifest: v.pipe(v.string(), v.description("the text of manifest.yaml")),
  manifest_file: v.optional(
    v.pipe(v.string(), v.maxLength(255), v.description("the name used in error lines")),
    "manifest.yaml",
  ),
  files: v.pipe(
    v.record(v.string(), Base64),
    v.description(
      `relative path → base64 content, ${MAX_BUILD_BYTES / 2 ** 20} MiB in all at most`,
    ),
  ),
  check_replay: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.maxValue(1000),
      v.description(
        "replay the project's in-flight durable sessions and this many of its newest ended ones against the new build before activating it (`cli deploy --check-replay [N]`); one in flight that diverges stops the deploy (409, nothing changed) unless `force`",
      ),
    ),
  ),
  force: v.optional(
    v.pipe(v.boolean(), v.description("deploy even when an in-flight session diverges")),
  ),
});

export type DeployInput = v.InferOutput<typeof DeployInputSchema>;

/**
 * The manifest of a deploy, or a 422 whose `issues` say what is wrong where.
 * @example readManifest({ manifest: "version: v2\nproject:\n  name: demo\n", manifest_file: "manifest.yaml", files: {} })
 */
export function readManifest(input: DeployInput): Manifest {
  try {
    return parseManifest(input.manifest, input.manifest_file || "manifest.yaml");
  } catch (err) {
    if (err instanceof ManifestError) {
      throw new HooklineError("unprocessable", err.message, { issues: err.issues });
    }
    throw err;
  }
}

/**
 * The files with normalised paths (refusing any that leave the folder) and their size; 413 past
 * MAX_BUILD_BYTES, 422 when a trigger's `call` names a file that is not among them.
 * @example checkFiles(manifest, { "handlers.py": "cGFzcwo=" }) // { files: {…}, size: 5 }
 */
export function checkFiles(
  manifest: Manifest,
  given: Record<string, string>,
): { files: Record<string, string>; size: number } {
  let size = 0;
  const files: Record<string, string> = {};
  for (const [path, content] of Object.entries(given)) {
    files[safePath(path)] = content;
    size += Buffer.byteLength(content, "base64");
    if (size > MAX_BUILD_BYTES) {
      throw new HooklineError("too_large", "the project's files exceed 16 MiB");
    }
  }
  const problems = manifest.triggers.flatMap((t) => {
    if (!t.call) return [];
    const file = t.call.split(":")[0]!;
    if (file in files) return [];
    return [`trigger "${t.name}": call "${t.call}": file "${file}" is not in the build`];
  });
  if (problems.length) throw new HooklineError("unprocessable", problems.join("\n"));
  return { files, size };
}
