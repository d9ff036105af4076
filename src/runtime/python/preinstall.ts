import { readFile, writeFile } from "node:fs/promises";
import { pip } from "./pip.ts";
import { answers, pipIndexes } from "./pip-indexes.ts";
import { elapsed, PROGRESS_EVERY_MS, redactUrls } from "./progress.ts";

/** pip's words for an index it cannot reach (offline, DNS, a proxy that refuses). */
const UNREACHABLE =
  /NewConnectionError|Network is unreachable|Temporary failure in name resolution|Name or service not known|Max retries exceeded|ProxyError/;

/** pip's words for a distribution it found: some index answered, whatever else failed. */
const FOUND = /^\s*(Processing|Downloading|Using cached|Requirement already satisfied)\b/m;

/** Failed tries in a row, all offline, after which the rest are not tried (when no index answers). */
export const UNREACHABLE_AFTER = 3;

/** The reason given for packages not tried because no index answers. */
const OFFLINE = "offline: no package index reachable";

/**
 * The requirements of a pre-installed list: one per line, without comments and blanks.
 * @example listRequirements("# tools\nrequests\n\nPyYAML  # yaml\n") // ["requests", "PyYAML"]
 */
export function listRequirements(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
}

/**
 * Whether a failed try looks offline: pip warned of an unreachable index and found nothing.
 * @example countsAsOffline("WARNING: … NewConnectionError …\nERROR: No matching distribution found for x") // true
 */
export function countsAsOffline(output: string): boolean {
  return UNREACHABLE.test(output) && !FOUND.test(output);
}

/** PEP 503: names compare lower-case with runs of `-`, `_`, `.` as one `-`. */
const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");

/**
 * Why pip left a package out, in a few words, and pip's own first error line. `answering`:
 * some configured index answers (so "not found" is the index's word, not the network's).
 * @example reasonOf("x", "ERROR: Could not find a version …\nERROR: No matching distribution found for x", true)
 *   // { reason: "not in the package index", error: "ERROR: Could not find a version …" }
 */
export function reasonOf(
  requirement: string,
  output: string,
  answering: boolean,
): { reason: string; error: string } {
  const lines = output.split("\n").map((l) => l.trim());
  const error =
    lines.find((l) => /^ERROR:/.test(l)) ??
    lines.find((l) => /^error:/i.test(l)) ??
    lines.filter(Boolean).at(-1) ??
    "";
  const lacking = /No matching distribution found for ([A-Za-z0-9._-]+)/.exec(output)?.[1];
  const name = /^[A-Za-z0-9._-]+/.exec(requirement)?.[0] ?? requirement;
  let reason = "pip failed";
  if (!answering && countsAsOffline(output)) reason = OFFLINE;
  else if (lacking && normalize(lacking) !== normalize(name)) {
    reason = `needs ${lacking}, not in the package index`;
  } else if (lacking || /Could not find a version/.test(output)) {
    reason = "not in the package index";
  } else if (
    /Failed (to )?build|subprocess-exited-with-error|metadata-generation-failed/.test(output)
  ) {
    reason = "failed to build";
  } else if (/ResolutionImpossible|conflicting dependencies/.test(output)) {
    reason = "conflicting dependencies";
  } else if (countsAsOffline(output)) reason = "no package index reachable";
  return { reason, error };
}

interface Missing {
  name: string;
  reason: string;
  error: string;
  output: string;
}

/**
 * Installs the pre-installed packages, one pip call each, from whatever index pip is configured
 * with (pip.conf, `PIP_*` variables), saying `installing 12/34 <name> (<time>)` every few
 * seconds and, at the end, one line: how many were installed, and the others grouped by reason
 * (offline, not in the index, failed to build, …). pip's own first error line and output for
 * each one left out go to `logFile`. Each package is tried on its own, so one the index lacks
 * costs only itself, whatever the order. Only when no index answers at all (each configured one
 * probed) and {@link UNREACHABLE_AFTER} tries in a row find nothing are the rest not tried.
 * Resolves to the names left out.
 * @example const missing = await preinstall(python, "/repo/python-runtime/preinstalled.txt", console.log, "/data/venv/preinstall.log");
 */
export async function preinstall(
  python: string,
  listFile: string,
  say: (line: string) => void,
  logFile?: string,
  pipArgs: string[] = [],
): Promise<string[]> {
  const packages = listRequirements(await readFile(listFile, "utf8"));
  if (packages.length === 0) return [];
  const started = Date.now();
  const places = await pipIndexes(python);
  const answering = (await Promise.all(places.map((p) => answers(p)))).some(Boolean);
  const missing: Missing[] = [];
  let reached = false; // pip found a distribution once: an index answers
  let offlineInARow = 0;
  let said = 0;
  for (const [i, name] of packages.entries()) {
    if (i === 0 || Date.now() - said >= PROGRESS_EVERY_MS) {
      const time = elapsed(Date.now() - started);
      say(`installing ${i + 1}/${packages.length} ${name} (${time}; once: later starts reuse it)`);
      said = Date.now();
    }
    if (!answering && !reached && offlineInARow >= UNREACHABLE_AFTER) {
      missing.push({ name, reason: OFFLINE, error: "not tried", output: "" });
      continue;
    }
    const output = await attempt(python, name, pipArgs);
    if (output === null) {
      reached = true;
      offlineInARow = 0;
      continue;
    }
    const offline = countsAsOffline(output);
    reached ||= !offline;
    offlineInARow = offline ? offlineInARow + 1 : 0;
    missing.push({ name, ...reasonOf(name, output, answering || reached), output });
  }
  if (missing.length > 0 && logFile) await writeLog(logFile, missing, places);
  const later = [python, "-m pip install", ...pipArgs].join(" ");
  say(summary(packages.length, missing, Date.now() - started, { later, logFile, places }));
  return missing.map((m) => m.name);
}

/**
 * One pip call for one package: null when it installed, else pip's output. `pipArgs` go to
 * `pip install` (the container's `--target <data volume>`).
 */
async function attempt(python: string, name: string, pipArgs: string[]): Promise<string | null> {
  const lines: string[] = [];
  try {
    // One retry, not pip's five, and a 15 s wait at most: offline, the backoff alone costs more.
    const args = ["--retries", "1", "--timeout", "15", name];
    await pip(python, args, { onProgress: (l) => lines.push(l), pipArgs });
    return null;
  } catch (e) {
    return lines.join("\n") || (e as Error).message;
  }
}

/**
 * The one line a first start says about the pre-install: the count, then those left out
 * grouped by reason, where pip's errors are, and how to install one later.
 */
function summary(
  total: number,
  missing: Missing[],
  ms: number,
  at: { later: string; logFile?: string | undefined; places: string[] },
): string {
  const time = elapsed(ms);
  if (missing.length === 0) return `pre-installed packages: all ${total} installed (${time})`;
  const installed = total - missing.length;
  const byReason = new Map<string, string[]>();
  for (const m of missing) byReason.set(m.reason, [...(byReason.get(m.reason) ?? []), m.name]);
  const groups = [...byReason].map(([reason, names]) => `${reason}: ${names.join(", ")}`);
  const offline = byReason.has(OFFLINE) ? ` (tried ${redactUrls(at.places.join(", "))})` : "";
  const log = at.logFile ? `; pip's first error for each in ${at.logFile}` : "";
  return (
    `pre-installed packages: ${installed === 0 ? "none" : installed} of ${total} installed ` +
    `(${time}); ${missing.length} not: ${groups.join("; ")}${offline}${log}; ` +
    `install one later with: ${at.later} <name>`
  );
}

/** pip's first error line and output for each package left out (URLs' passwords left out). */
async function writeLog(file: string, missing: Missing[], places: string[]): Promise<void> {
  const parts = [
    `# pre-installed packages left out, ${new Date().toISOString()}`,
    `# package indexes: ${places.join(", ") || "none"}`,
    ...missing.map((m) =>
      [`${m.name}: ${m.reason}`, `  ${m.error}`, ...m.output.split("\n").map((l) => `    ${l}`)]
        .join("\n")
        .trimEnd(),
    ),
  ];
  await writeFile(file, `${redactUrls(parts.join("\n\n"))}\n`);
}
