import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { CliError, type Io } from "../src/cli/io.ts";
import { resolveDirs } from "../src/config.ts";
import { loadSecretKey } from "../src/secrets.ts";
import { defaultStorageUrl } from "../src/storage-url.ts";

// lmdb (a native binding) loads when a backup or restore runs, not for `cli --help`.
const backupModule = () => import("../src/storage/backup.ts");

/** The storage `cli up` would open here: `SVC_STORAGE`, else the data home's default. */
const storageUrl = (env: NodeJS.ProcessEnv) =>
  env.SVC_STORAGE || defaultStorageUrl(resolveDirs(env).dataHome);

/**
 * The key the service here would seal with, without making one: `SVC_SECRET_KEY`, else the
 * config home's `secret.key` if it exists, else none (a backup with secrets is then refused).
 */
function secretKey(env: NodeJS.ProcessEnv): Buffer | null {
  const { configHome } = resolveDirs(env);
  if (!env.SVC_SECRET_KEY && !existsSync(join(configHome, "secret.key"))) return null;
  return loadSecretKey(configHome, env);
}

/** Runs `fn`, turning its Error into the CLI's one-line `error: …`. */
async function oneLine<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw new CliError((e as Error).message.split("\n")[0] ?? String(e));
  }
}

/**
 * `cli backup <file>`: a consistent, compacted copy of the embedded store, while it runs.
 * @example await run(["backup", "/backups/hookline.mdb"], io)
 */
export function backupCommand(io: Io) {
  return defineCommand({
    meta: {
      name: "backup",
      description: "Copy the embedded store (lmdb) into FILE, consistent while the service runs",
    },
    args: { file: { type: "positional", required: true, description: "The backup file to write" } },
    async run({ args }) {
      const file = resolve(io.cwd, args.file);
      const { backupStore } = await backupModule();
      const { format, fromLog } = await oneLine(() => backupStore(storageUrl(io.env), file));
      // Webhooks answered whose commit had not landed yet: taken from the accept log.
      const logged =
        fromLog === 0
          ? ""
          : `; ${fromLog} accepted webhook${fromLog > 1 ? "s" : ""} from the accept log`;
      io.out(`backup: ${file} (storage format ${format}${logged})`);
    },
  });
}

/**
 * `cli restore <file> [--force]`: a backup put in place as the data home's store.
 * @example await run(["restore", "/backups/hookline.mdb"], io)
 */
export function restoreCommand(io: Io) {
  return defineCommand({
    meta: {
      name: "restore",
      description:
        "Put a backup in place as the embedded store (the service stopped; a fresh data home unless --force)",
    },
    args: {
      file: { type: "positional", required: true, description: "A file `cli backup` wrote" },
      force: {
        type: "boolean",
        description: "Replace a store that holds data (kept aside as db.before-restore-<time>)",
      },
    },
    async run({ args }) {
      const file = resolve(io.cwd, args.file);
      const url = storageUrl(io.env);
      const { restoreStore } = await backupModule();
      const done = await oneLine(() =>
        restoreStore(file, url, { key: secretKey(io.env), force: Boolean(args.force) }),
      );
      if (done.keptAside) io.out(`restore: the store that was there is kept in ${done.keptAside}`);
      io.out(`restored: ${file} (storage format ${done.format}); start the service to use it`);
    },
  });
}
