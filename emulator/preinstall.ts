import { readFile } from "node:fs/promises";
import { pip } from "../src/runtime/python/pip.ts";

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

/**
 * Installs the pre-installed packages from whatever index pip is configured with (pip.conf,
 * `PIP_*` variables): all at once, and when that fails one by one, so one package the index
 * lacks costs only itself. Each package left out gets one line through `say`; resolves to their
 * names. Once the index proves unreachable, the rest are not tried (each would time out).
 * @example const missing = await preinstall(python, "/repo/python-runtime/preinstalled.txt", console.log);
 */
export async function preinstall(
  python: string,
  listFile: string,
  say: (line: string) => void,
): Promise<string[]> {
  const packages = listRequirements(await readFile(listFile, "utf8"));
  if (packages.length === 0) return [];
  // One retry, not pip's five: offline, the default backoff alone costs ten seconds.
  const attempt = async (names: string[]) => {
    const lines: string[] = [];
    try {
      await pip(python, ["--retries", "1", ...names], { onProgress: (l) => lines.push(l) });
      return null;
    } catch (e) {
      return lines.join("\n") || (e as Error).message;
    }
  };
  say(`installing the pre-installed packages (${listFile})`);
  if ((await attempt(packages)) === null) {
    say(`pre-installed packages installed: ${packages.length}`);
    return [];
  }
  const missing: string[] = [];
  let unreachable = false;
  for (const name of packages) {
    const output = unreachable ? "" : await attempt([name]);
    if (output === null) continue;
    unreachable ||= UNREACHABLE.test(output);
    const why = unreachable
      ? "no package index reachable"
      : /No matching distribution|Could not find a version/.test(output)
        ? "not found in the package index"
        : `pip failed: ${output.trim().split("\n").at(-1)}`;
    say(`pre-installed package "${name}" not installed: ${why}`);
    missing.push(name);
  }
  say(
    `pre-installed packages: ${packages.length - missing.length} installed, ${missing.length} not ` +
      `(install them later with: ${python} -m pip install <name>)`,
  );
  return missing;
}
