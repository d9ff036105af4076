import { execa } from "execa";
import { HooklineError } from "../../errors.ts";

/** Oldest Python that runs workflows. */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface SdkVersion {
  /** The interpreter's version, e.g. `3.11.7`. */
  python: string;
  /** The installed `workflow_sdk` version. */
  sdk: string;
}

/**
 * `<python> -m workflow_sdk.runner version`, or the reason it failed (the last line of stderr).
 * @example const v = await sdkVersion("/usr/bin/python3"); if ("sdk" in v) console.log(v.sdk);
 */
export async function sdkVersion(python: string): Promise<SdkVersion | { error: string }> {
  const r = await execa(python, ["-m", "workflow_sdk.runner", "version"], {
    reject: false,
    timeout: 60_000,
  });
  if (r.failed) return { error: lastLine(r.stderr) || (r.shortMessage ?? "failed") };
  try {
    const v = JSON.parse(lastLine(r.stdout)) as Partial<SdkVersion>;
    if (typeof v.python === "string" && typeof v.sdk === "string")
      return { python: v.python, sdk: v.sdk };
  } catch {}
  return { error: `unexpected output: ${lastLine(r.stdout)}` };
}

/** The interpreter's `major.minor.micro`, or null when it cannot be run. */
export async function interpreterVersion(python: string): Promise<string | null> {
  const r = await execa(python, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], {
    reject: false,
    timeout: 60_000,
  });
  return r.failed ? null : lastLine(r.stdout);
}

export function isSupported(version: string): boolean {
  return compareVersions(version, MIN_PYTHON.join(".")) >= 0;
}

/**
 * Checks the Python named by `SVC_WORKER_PYTHON`: it must run, be 3.11 or newer and import
 * `workflow_sdk`. Resolves to the path; rejects with a message that says what to do.
 * @example await checkWorkerPython("/usr/bin/python3", "/src/hookline");
 */
export async function checkWorkerPython(python: string, repoRoot: string): Promise<string> {
  const say = (what: string) =>
    new HooklineError("unavailable", `SVC_WORKER_PYTHON=${python}: ${what}`);
  const v = await sdkVersion(python);
  if ("sdk" in v) {
    if (!isSupported(v.python)) throw say(tooOld(v.python));
    return python;
  }
  const version = await interpreterVersion(python);
  if (version === null) throw say(`cannot be run (${v.error})`);
  if (!isSupported(version)) throw say(tooOld(version));
  throw say(
    `cannot import workflow_sdk (${v.error}): install it with pip install ${repoRoot}/python-runtime`,
  );
}

export function tooOld(version: string): string {
  const [major, minor] = version.split(".");
  return `Python ${major}.${minor} is too old, ${MIN_PYTHON.join(".")} or newer is needed`;
}

/** Numeric comparison of dotted versions (`0.10.0` > `0.9.1`); non-numeric parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(".").map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines[lines.length - 1] ?? "").trim();
}

/** The last `max` characters of pip's (or any tool's) output, for an error message. */
export function tail(text: string, maxLines = 40, maxChars = 4000): string {
  const t = text.trim().split("\n").slice(-maxLines).join("\n");
  return t.length > maxChars ? `…${t.slice(-maxChars)}` : t;
}
