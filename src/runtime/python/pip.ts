import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { HooklineError } from "../../errors.ts";
import { tail } from "./python.ts";

export interface PipOptions {
  /** Extra arguments for `pip install`, e.g. `["--index-url", "…"]`. */
  pipArgs?: string[];
  /** One call per line of pip's output. */
  onProgress?: (line: string) => void;
}

/**
 * `<python> -m pip install <args>`; resolves to pip's combined output, rejects with an Error
 * whose message is the output's tail.
 * @example await pip("/data/venv/bin/python", ["--no-deps", "/src/python-runtime"]);
 */
export async function pip(
  python: string,
  args: string[],
  options: PipOptions = {},
): Promise<string> {
  const proc = execa(
    python,
    [
      "-m",
      "pip",
      "install",
      "--disable-pip-version-check",
      "--no-input",
      ...args,
      ...(options.pipArgs ?? []),
    ],
    { all: true, reject: false, stdin: "ignore", env: { PYTHONUNBUFFERED: "1" } },
  );
  if (options.onProgress) {
    const onProgress = options.onProgress;
    let partial = "";
    proc.all?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) onProgress(line.trimEnd());
    });
  }
  const r = await proc;
  const output = String(r.all ?? "");
  if (r.failed) throw new Error(tail(output) || r.shortMessage);
  return output;
}

/** Distributions the service brings itself: `workflow_sdk`, importable as `autokitteh`. */
const OWN_SDK = new Set(["autokitteh", "workflow-sdk"]);

/** PEP 503: names compare lower-case with runs of `-`, `_`, `.` as one `-`. */
const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");

/**
 * A `requirements.txt` without the lines that would install AutoKitteh's SDK (or ours) over
 * the service's own, with or without a version, extras or markers; and the lines taken out.
 * @example withoutOwnSdk("requests\nautokitteh>=0.5 ; python_version >= '3.11'\n")
 *   // { text: "requests\n", skipped: ["autokitteh>=0.5 ; python_version >= '3.11'"] }
 */
export function withoutOwnSdk(text: string): { text: string; skipped: string[] } {
  const skipped: string[] = [];
  const kept = text.split("\n").filter((line) => {
    const requirement = line.replace(/(^|\s)#.*$/, "").trim();
    const name = /^([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(requirement)?.[1];
    if (!name || !OWN_SDK.has(normalize(name))) return true;
    skipped.push(requirement);
    return false;
  });
  return { text: kept.join("\n"), skipped };
}

/** True when a requirements file names nothing (only blanks and comments). */
export function isEmptyRequirements(text: string): boolean {
  return text.split("\n").every((l) => l.trim() === "" || l.trim().startsWith("#"));
}

/**
 * Installs a project's `requirements.txt` into `python`'s environment, but for the lines that
 * would replace the service's SDK (`withoutOwnSdk`): at a deploy's check and on every instance
 * that installs the build later alike. A pip failure rejects with HooklineError("unprocessable")
 * carrying the tail of pip's output, so the deploy fails with it.
 * @example await installRequirements(python, "requests==2.32.3\n");
 */
export async function installRequirements(
  python: string,
  text: string,
  options: PipOptions = {},
): Promise<void> {
  const wanted = withoutOwnSdk(text).text;
  if (isEmptyRequirements(wanted)) return;
  const dir = await mkdtemp(join(tmpdir(), "hookline-req-"));
  try {
    const file = join(dir, "requirements.txt");
    await writeFile(file, wanted);
    await pip(python, ["-r", file], options);
  } catch (e) {
    throw new HooklineError(
      "unprocessable",
      `requirements.txt: pip failed:\n${e instanceof Error ? e.message : String(e)}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
