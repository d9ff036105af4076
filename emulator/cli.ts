import { main as clientMain } from "../src/cli/main.ts";

/**
 * `cli` / `hookline`: the API client's commands plus `up`, which starts the emulator here,
 * `dev`, its short form for the edit-save-call loop, `backup` and `restore` of the embedded
 * store, `storage copy` from one store into another, and `config where` with the store's format version (these open the store itself).
 * @example await main(["up", "--mode", "dev"])
 */
export function main(argv: string[]): Promise<void> {
  return clientMain(argv, {
    up: (io) => import("./up-command.ts").then((m) => m.default(io)),
    dev: (io) => import("./up-command.ts").then((m) => m.devCommand(io)),
    backup: (io) => import("./backup-command.ts").then((m) => m.backupCommand(io)),
    restore: (io) => import("./backup-command.ts").then((m) => m.restoreCommand(io)),
    storage: (io) => import("./storage-command.ts").then((m) => m.storageCommand(io)),
    // The store's driver loads when `config where` runs, not to show a help text.
    config: async (io) =>
      (await import("../src/cli/config.ts")).default(io, async (url) => {
        const { formatLine } = await import("../src/storage/format-info.ts");
        return [await formatLine(url)];
      }),
  });
}
