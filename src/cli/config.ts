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
    `venv: ${join(dirs.dataHome, "venv")}`,
    `service: ${serviceUrl(env)}  (SVC_URL)`,
  ];
}

export default function configCommand(io: Io) {
  const where = defineCommand({
    meta: {
      name: "where",
      description:
        "Show the data and config homes, the storage engine, the venv and the service URL",
    },
    run() {
      for (const line of whereLines(io.env)) io.out(line);
    },
  });
  return defineCommand({
    meta: { name: "config", description: "Where things are" },
    subCommands: { where },
  });
}
