/**
 * What the settings page shows (read-only): the service's version and mode, its storage, data
 * home and Python, which OAuth apps are configured (names of environment variables, never a
 * value) and which pre-installed packages pip could not install.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type OAuthEnv, PRESETS } from "../oauth/index.ts";
import { packageRoot } from "../package-root.ts";

/** This package's version (its package.json), read once. */
export const VERSION: string = JSON.parse(
  readFileSync(join(packageRoot(import.meta.url), "package.json"), "utf8"),
).version;

/** What the host knows of itself (src/platform/node.ts fills it; tests may leave it out). */
export interface HostFacts {
  mode: "dev" | "prod";
  /** `lmdb  /data/db` and the like, a password redacted (describeStorage). */
  storage: string;
  dataHome: string;
  /** The worker's Python, in words: `SVC_WORKER_PYTHON=/usr/bin/python3`, or the venv. */
  python: string;
  /** The venv whose `.hookline.json` notes the missing pre-installed packages, if any. */
  venvDir?: string;
}

/** The settings page's facts. */
export interface AboutView {
  version: string;
  host: HostFacts | null;
  /** Each OAuth provider's service-wide app: its environment names and whether both are set. */
  oauth: { provider: string; env: [string, string]; configured: boolean }[];
  /** null: no venv note to read (no venv yet, or the host's own Python). */
  missing: { name: string; why: string }[] | null;
}

/** What the venv's note says when it does not say why (it names the packages only). */
const NO_REASON =
  "pip could not install it when the environment was made (offline, not in the package index, or it failed to build); the first start's output said which";

/**
 * @example aboutView("0.1.0", null, process.env).oauth[0] // { provider: "Google", env: ["GOOGLE_CLIENT_ID", …], configured: false }
 */
export function aboutView(version: string, host: HostFacts | null, env: OAuthEnv): AboutView {
  const byEnv = new Map<string, string>();
  for (const p of PRESETS.values()) if (!byEnv.has(p.env)) byEnv.set(p.env, p.provider);
  const oauth = [...byEnv].map(([prefix, provider]) => {
    const names: [string, string] = [`${prefix}_CLIENT_ID`, `${prefix}_CLIENT_SECRET`];
    return { provider, env: names, configured: names.every((n) => Boolean(env[n])) };
  });
  return { version, host, oauth, missing: host?.venvDir ? missingPackages(host.venvDir) : null };
}

/** The venv note's missing packages: names (today), or `{ name, why }` where a host says why. */
function missingPackages(venvDir: string): AboutView["missing"] {
  let note: unknown;
  try {
    note = JSON.parse(readFileSync(join(venvDir, ".hookline.json"), "utf8")).preinstall_missing;
  } catch {
    return null;
  }
  if (!Array.isArray(note)) return [];
  return note.map((m: unknown) =>
    typeof m === "string"
      ? { name: m, why: NO_REASON }
      : {
          name: String((m as { name?: unknown }).name),
          why: String((m as { why?: unknown }).why ?? NO_REASON),
        },
  );
}
