import { readFile } from "node:fs/promises";
import { pip } from "./pip.ts";

/** pip's words for an index it cannot reach (offline, DNS, a proxy that refuses). */
const UNREACHABLE =
  /NewConnectionError|Network is unreachable|Temporary failure in name resolution|Max retries exceeded|ProxyError/;

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

/** Failed tries in a row, with nothing installed, after which no index counts as reachable. */
export const UNREACHABLE_AFTER = 3;

/** pip's words for a distribution it found: some index answered, whatever else failed. */
const FOUND = /^\s*(Processing|Downloading|Using cached|Requirement already satisfied)\b/m;

/**
 * Whether a failed try counts towards "no index reachable": pip warned of an unreachable index
 * and found nothing at all. Behind a partial mirror pip warns on every try, but it finds the
 * packages the mirror has (a list whose first few packages the mirror lacks is not offline).
 * @example countsAsOffline("WARNING: … NewConnectionError …\nERROR: No matching distribution found for x") // true
 */
export function countsAsOffline(output: string): boolean {
  return UNREACHABLE.test(output) && !FOUND.test(output);
}

/**
 * Why pip left one package out, in one line. An index that answered nothing (the default one
 * behind a proxy) next to a mirror that answered is named, but is not the cause: the package is
 * not in what pip could read.
 * @example whyMissing("WARNING: Retrying … NewConnectionError …: /simple/x/\nERROR: No matching distribution found for x")
 *   // "not found in the package index (an index was unreachable: see pip's warnings)"
 */
export function whyMissing(output: string): string {
  const unreachable = UNREACHABLE.test(output);
  if (/No matching distribution|Could not find a version/.test(output)) {
    return unreachable
      ? "not found in the package index (an index was unreachable: see pip's warnings)"
      : "not found in the package index";
  }
  if (unreachable) return "no package index reachable";
  return `pip failed: ${output.trim().split("\n").at(-1)}`;
}

/**
 * The packages pip says it found no distribution of, as it spells them in its error lines.
 * @example notFound("ERROR: No matching distribution found for slack-sdk") // ["slack-sdk"]
 */
export function notFound(output: string): string[] {
  return [...output.matchAll(/No matching distribution found for ([A-Za-z0-9._-]+)/g)].map(
    (m) => m[1] as string,
  );
}

/**
 * Installs the pre-installed packages from whatever index pip is configured with (pip.conf,
 * `PIP_*` variables): all at once; a package pip names as not found is set aside with one line
 * through `say` saying why, and the rest are tried again at once. A failure that names no package
 * is tried one by one, so one package the index lacks costs only itself. Resolves to the names
 * left out. pip's warnings (a default index it cannot reach next to a mirror it can) fail
 * nothing: a package counts as missing only when pip fails for it. Only when
 * {@link UNREACHABLE_AFTER} tries in a row fail on an unreachable index and pip has found no
 * distribution at all ({@link countsAsOffline}) are the rest not tried (each would time out the
 * same way). `pipArgs` go to every `pip install` (the container's `--target <data volume>`).
 * @example const missing = await preinstall(python, "/repo/python-runtime/preinstalled.txt", console.log);
 */
export async function preinstall(
  python: string,
  listFile: string,
  say: (line: string) => void,
  pipArgs: string[] = [],
): Promise<string[]> {
  const packages = listRequirements(await readFile(listFile, "utf8"));
  if (packages.length === 0) return [];
  // One retry, not pip's five: offline, the default backoff alone costs ten seconds.
  const attempt = async (names: string[]) => {
    const lines: string[] = [];
    try {
      await pip(python, ["--retries", "1", ...names], {
        onProgress: (l) => lines.push(l),
        pipArgs,
      });
      return null;
    } catch (e) {
      return lines.join("\n") || (e as Error).message;
    }
  };
  say(`installing the pre-installed packages (${listFile})`);
  const missing: string[] = [];
  let rest = packages;
  let failure: string | null = null;
  let unreachableInARow = 0;
  let reached = false; // pip found a distribution once: an index answers, so never "offline"
  while (rest.length > 0) {
    if (!reached && unreachableInARow >= UNREACHABLE_AFTER) {
      for (const name of rest)
        say(`pre-installed package "${name}" not installed: no package index reachable`);
      return done([...missing, ...rest]);
    }
    failure = await attempt(rest);
    const named = failure === null ? [] : notFound(failure).filter((n) => rest.includes(n));
    if (named.length === 0) break;
    reached ||= !countsAsOffline(failure ?? "");
    unreachableInARow = reached ? 0 : unreachableInARow + 1;
    for (const name of named)
      say(`pre-installed package "${name}" not installed: ${whyMissing(failure ?? "")}`);
    missing.push(...named);
    rest = rest.filter((n) => !named.includes(n));
  }
  if (failure !== null && rest.length > 0) {
    missing.push(...(await oneByOne(rest, attempt, say, reached)));
  }
  return done(missing);

  function done(left: string[]): string[] {
    if (left.length === 0) say(`pre-installed packages installed: ${packages.length}`);
    else {
      say(
        `pre-installed packages: ${packages.length - left.length} installed, ${left.length} not ` +
          `(install them later with: ${[python, "-m pip install", ...pipArgs].join(" ")} <name>)`,
      );
    }
    return left;
  }
}

/** Each package on its own, for a failure pip did not pin on one; resolves to those left out. */
async function oneByOne(
  names: string[],
  attempt: (names: string[]) => Promise<string | null>,
  say: (line: string) => void,
  reachedBefore: boolean,
): Promise<string[]> {
  const missing: string[] = [];
  let reached = reachedBefore;
  let unreachableInARow = 0;
  for (const name of names) {
    const offline = !reached && unreachableInARow >= UNREACHABLE_AFTER;
    const output = offline ? "" : await attempt([name]);
    if (output === null) {
      reached = true;
      unreachableInARow = 0;
      continue;
    }
    const why = offline ? "no package index reachable" : whyMissing(output);
    reached ||= !offline && !countsAsOffline(output);
    unreachableInARow = reached ? 0 : unreachableInARow + 1;
    say(`pre-installed package "${name}" not installed: ${why}`);
    missing.push(name);
  }
  return missing;
}
