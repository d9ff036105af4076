import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { resolveDirs, serviceUrl } from "../config.ts";
import { defaultStorageUrl, describeStorage } from "../storage-url.ts";
import type { Io } from "./io.ts";

/**
 * The lines of `config where`.
 * @example whereLines({ XDG_DATA_HOME: "/d" })[0] // "data home: /d/hookline  (XDG_DATA_HOME)"
 */
export function whereLines(env: NodeJS.ProcessEnv): string[] {
  const dirs = resolveDirs(env);
  const venv = join(dirs.dataHome, "venv");
  let storage: string;
  try {
    const url = env.SVC_STORAGE || defaultStorageUrl(dirs.dataHome);
    storage = `storage: ${describeStorage(url, dirs.dataHome).text}  (SVC_STORAGE)`;
  } catch (e) {
    storage = `storage: ${(e as Error).message}`;
  }
  return [
    `data home: ${dirs.dataHome}  (XDG_DATA_HOME)`,
    `config home: ${dirs.configHome}  (XDG_CONFIG_HOME)`,
    storage,
    `venv: ${venv}`,
    ...missingPreinstalled(venv),
    `service: ${serviceUrl(env)}  (SVC_URL)`,
  ];
}

/** The venv's note (emulator/venv.ts writes it) of pre-installed packages pip could not get. */
function missingPreinstalled(venv: string): string[] {
  let missing: unknown;
  try {
    missing = JSON.parse(readFileSync(join(venv, ".hookline.json"), "utf8")).preinstall_missing;
  } catch {
    return []; // no venv yet
  }
  if (!Array.isArray(missing) || missing.length === 0) return [];
  return [`pre-installed packages not installed: ${missing.join(", ")}`];
}

/**
 * `config where`, and what a host adds to its lines: the emulator, which may open the store,
 * adds the store's format version (src/storage/format-info.ts) after the storage line.
 * @example configCommand(io, async (url) => [`storage format: 2`])
 */
export default function configCommand(
  io: Io,
  storageLines?: (storageUrl: string) => Promise<string[]>,
) {
  const where = defineCommand({
    meta: {
      name: "where",
      description:
        "Show the data and config homes, the storage engine, the venv and the service URL",
    },
    async run() {
      const lines = whereLines(io.env);
      if (storageLines) {
        let url: string | null = null;
        try {
          url = io.env.SVC_STORAGE || defaultStorageUrl(resolveDirs(io.env).dataHome);
        } catch {
          url = null; // the storage line already says what is wrong
        }
        if (url) lines.splice(3, 0, ...(await storageLines(url)));
      }
      for (const line of lines) io.out(line);
    },
  });
  return defineCommand({
    meta: { name: "config", description: "Where things are" },
    subCommands: { where },
  });
}
