import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the peers are installed: git-ignored, beside the bench (`bench/.peers/<name>`). */
export const PEERS_DIR = fileURLToPath(new URL("../.peers/", import.meta.url));

/** The peers and their exact versions, from the npm registry. */
export const PEERS = {
  restate: {
    packages: { "@restatedev/restate-server": "1.7.12", "@restatedev/restate-sdk": "1.17.2" },
    overrides: {},
  },
  // n8n's spreadsheet node pulls `xlsx` from cdn.sheetjs.com, which the npm registry alone does
  // not reach: the registry's last `xlsx` stands in (the bench's workflow does not use it).
  n8n: { packages: { n8n: "2.8.4" }, overrides: { xlsx: "0.18.5" } },
} as const;

export type PeerName = keyof typeof PEERS;

function installedVersion(dir: string, pkg: string): string | null {
  try {
    const manifest = join(dir, "node_modules", pkg, "package.json");
    return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

/**
 * The peer's folder, installed with `npm install` on first use (a few minutes for n8n) and kept
 * for later runs. Throws when npm fails (the registry unreachable, say); the bench then says so
 * in the peer's rows.
 * @example const dir = ensurePeer("restate", log); // bench/.peers/restate
 */
export function ensurePeer(name: PeerName, log: (line: string) => void): string {
  const dir = join(PEERS_DIR, name);
  const { packages, overrides } = PEERS[name];
  const wanted = Object.entries(packages);
  if (wanted.every(([pkg, v]) => installedVersion(dir, pkg) === v)) return dir;
  mkdirSync(dir, { recursive: true });
  const manifest = { name: `hookline-bench-peer-${name}`, private: true, overrides };
  if (!existsSync(join(dir, "package.json")) || Object.keys(overrides).length) {
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  }
  log(`installing peer ${name} (${wanted.map(([p, v]) => `${p}@${v}`).join(", ")}) into ${dir}`);
  execFileSync(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...wanted.map(([p, v]) => `${p}@${v}`),
    ],
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 15 * 60_000 },
  );
  return dir;
}
