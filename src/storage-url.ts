import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

// What a storage URL means and which engine a data home holds: plain functions over strings and
// folder listings, a base module beside config.ts, so the config and the CLI (which must not
// reach src/storage/) use them without loading a database.

/** The storage URLs the service takes, as the start-up error names them. */
export const SUPPORTED_STORAGE =
  "lmdb:<dir>[?sync=normal|meta|full], fs:<dir>, memory:, redis://…, postgres://…";

/**
 * A `SVC_STORAGE` value, parsed: which driver and where.
 * @example parseStorageUrl("lmdb:/d/db?sync=full") // { kind: "lmdb", dir: "/d/db", sync: "full" }
 */
export type StorageTarget =
  | { kind: "memory" }
  | { kind: "fs"; dir: string }
  | { kind: "lmdb"; dir: string; sync: "normal" | "meta" | "full" }
  | { kind: "redis"; url: string }
  | { kind: "postgres"; url: string };

/** A URL scheme: letters first, then letters, digits, `+`, `-` or `.`, then a colon. */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/**
 * Parses a storage URL, or throws a one-line Error naming the supported ones. A value without a
 * scheme is a folder for the fs driver; any scheme not listed in SUPPORTED_STORAGE is refused
 * (before, `postgres://…` quietly became a folder named `postgres:`).
 * @example parseStorageUrl("foo:bar") // throws: SVC_STORAGE: unsupported storage "foo:bar" …
 */
export function parseStorageUrl(url: string): StorageTarget {
  if (url === "memory") return { kind: "memory" }; // accepted before the colon was required
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  const folder = (rest: string) => {
    if (!rest) throw new Error(`SVC_STORAGE: "${url}" names no folder`);
    return rest;
  };
  if (scheme === undefined) return { kind: "fs", dir: folder(url) };
  const rest = url.slice(scheme.length + 1);
  if (scheme === "memory" && rest === "") return { kind: "memory" };
  if (scheme === "fs") return { kind: "fs", dir: folder(rest) };
  if (scheme === "redis" || scheme === "rediss") return { kind: "redis", url };
  if (scheme === "postgres" || scheme === "postgresql") return { kind: "postgres", url };
  if (scheme === "lmdb") {
    const [dir = "", query] = rest.split("?", 2);
    const params = new URLSearchParams(query ?? "");
    const sync = params.get("sync") ?? "normal";
    const other = [...params.keys()].find((k) => k !== "sync");
    if (other || (sync !== "normal" && sync !== "meta" && sync !== "full")) {
      throw new Error(
        `SVC_STORAGE: "${url}": lmdb takes only ?sync=normal (default), ?sync=meta or ?sync=full`,
      );
    }
    return { kind: "lmdb", dir: folder(dir), sync };
  }
  throw new Error(`SVC_STORAGE: unsupported storage "${url}"; supported: ${SUPPORTED_STORAGE}`);
}

/** The top-level namespaces of `createStores`: folders of these names mark an fs-lite store. */
const FS_NAMESPACES = [
  "projects",
  "project-names",
  "webhooks",
  "builds",
  "deployments",
  "events",
  "sessions",
  "session-index",
  "logs",
  "journals",
];

/**
 * What `detectEngine` found in a data home, and the storage URL of each layout there.
 * @example { found: "fs", fs: "fs:/d/hookline/store", lmdb: "lmdb:/d/hookline/db" }
 */
export interface DetectedEngine {
  /** `fs`: only an fs-lite store; `lmdb`: only an LMDB one; `both`; `none`: neither yet. */
  found: "fs" | "lmdb" | "both" | "none";
  /** Where the default fs-lite store is (`<dataHome>/store`), as a storage URL. */
  fs: string;
  /** Where the LMDB store goes (`<dataHome>/db`, holding `data.mdb`), as a storage URL. */
  lmdb: string;
}

/**
 * Which embedded store a data home already holds: fs-lite's layout (namespace folders such as
 * `projects/` or `sessions/` directly under `<dataHome>/store`) or LMDB's (`<dataHome>/db/data.mdb`).
 * Reads the folders only; opens nothing.
 * @example detectEngine("/home/ada/.local/share/hookline").found // "fs" on an existing install
 */
export function detectEngine(dataHome: string): DetectedEngine {
  const fsDir = join(dataHome, "store");
  const lmdbDir = join(dataHome, "db");
  let hasFs = false;
  try {
    hasFs = readdirSync(fsDir, { withFileTypes: true }).some(
      (e) => e.isDirectory() && FS_NAMESPACES.includes(e.name),
    );
  } catch {
    hasFs = false; // no store folder, or not a folder
  }
  const hasLmdb = existsSync(join(lmdbDir, "data.mdb"));
  const found = hasFs && hasLmdb ? "both" : hasFs ? "fs" : hasLmdb ? "lmdb" : "none";
  return { found, fs: `fs:${fsDir}`, lmdb: `lmdb:${lmdbDir}` };
}

/**
 * The storage of a data home when `SVC_STORAGE` is not set: LMDB at `<dataHome>/db`, unless
 * the data home holds only an fs-lite store (written before LMDB was the default), which is
 * then used as it is: never migrated behind the user's back.
 * @example defaultStorageUrl("/d/hookline") // "lmdb:/d/hookline/db" on a new data home
 */
export function defaultStorageUrl(dataHome: string): string {
  const found = detectEngine(dataHome);
  return found.found === "fs" ? found.fs : found.lmdb;
}

/**
 * The engine a storage URL names and where it keeps its data, for `cli config where` and the
 * start-up notice. `detected` is true when the URL is the fs store that `defaultStorageUrl`
 * chose because the data home already held one.
 * @example describeStorage("lmdb:/d/db", "/d").text // "lmdb (sync=normal)  /d/db/data.mdb"
 */
export function describeStorage(
  url: string,
  dataHome: string,
): { engine: StorageTarget["kind"]; detected: boolean; text: string } {
  const target = parseStorageUrl(url);
  const found = detectEngine(dataHome);
  const detected = target.kind === "fs" && url === found.fs && found.found === "fs";
  switch (target.kind) {
    case "memory":
      return { engine: "memory", detected, text: "memory (nothing survives a restart)" };
    case "redis":
      return { engine: "redis", detected, text: `redis  ${redactUrl(target.url)}` };
    case "postgres":
      return { engine: "postgres", detected, text: `postgres  ${redactUrl(target.url)}` };
    case "lmdb":
      return {
        engine: "lmdb",
        detected,
        text: `lmdb (sync=${target.sync})  ${join(target.dir, "data.mdb")}`,
      };
    case "fs":
      return {
        engine: "fs",
        detected,
        text: `${detected ? "fs (detected existing data)" : "fs"}  ${target.dir}`,
      };
  }
}

/** A URL without its password. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}
