import { access } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

/** pip's own default index, used when nothing sets `index-url`. */
const DEFAULT_INDEX = "https://pypi.org/simple";

/** Where pip's settings come from, weakest first: a config file's sections, then PIP_* variables. */
const RANK: Record<string, number> = { global: 1, install: 2, ":env:": 3 };

/**
 * The places pip reads packages from, as `pip config list` reports its settings (pip.conf files
 * and `PIP_*` variables): `index-url` (else PyPI), `extra-index-url`, `find-links`; no index
 * with `no-index`. Each is a URL or a folder.
 * @example await pipIndexes("/data/venv/bin/python") // ["https://pypi.org/simple", "file:///opt/pypi/simple", "/opt/wheels"]
 */
export async function pipIndexes(python: string): Promise<string[]> {
  const r = await execa(python, ["-m", "pip", "config", "list"], {
    reject: false,
    timeout: 30_000,
  });
  return indexesOf(r.failed ? "" : String(r.stdout));
}

/**
 * The places named by `pip config list`'s output (`<section>.<key>='<value>'` a line); a key
 * set in a stronger place (the environment over `[install]` over `[global]`) wins.
 * @example indexesOf("global.extra-index-url='file:///m/simple'\n:env:.find-links='/w'") // ["https://pypi.org/simple", "file:///m/simple", "/w"]
 */
export function indexesOf(configList: string): string[] {
  const settings = new Map<string, { rank: number; value: string }>();
  for (const line of configList.split("\n")) {
    const m = /^(.+)\.([a-z-]+)='(.*)'$/.exec(line.trim());
    if (!m) continue;
    const [, section = "", key = "", value = ""] = m;
    const rank = RANK[section] ?? 0;
    if ((settings.get(key)?.rank ?? -1) <= rank) settings.set(key, { rank, value });
  }
  const get = (key: string) => settings.get(key)?.value.split(/\s+/).filter(Boolean) ?? [];
  const noIndex = /^(1|true|yes|on)$/i.test(settings.get("no-index")?.value ?? "");
  const index = get("index-url")[0] ?? DEFAULT_INDEX;
  const indexes = noIndex ? [] : [index, ...get("extra-index-url")];
  return [...indexes, ...get("find-links")];
}

/**
 * Whether a place answers: a folder (or `file://` URL) that exists, a server that answers at
 * all (any status). Only ever used to keep trying: pip may reach what Node cannot (a proxy).
 * @example await answers("http://127.0.0.1:9/simple") // false
 */
export async function answers(place: string, timeoutMs = 5000): Promise<boolean> {
  if (/^https?:\/\//.test(place)) {
    try {
      const res = await fetch(place, { signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
      return true;
    } catch {
      return false;
    }
  }
  try {
    await access(place.startsWith("file:") ? fileURLToPath(place) : place);
    return true;
  } catch {
    return false;
  }
}
