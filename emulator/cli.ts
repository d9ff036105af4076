import { main as clientMain } from "../src/cli/main.ts";

/**
 * `cli` / `hookline`: the API client's commands plus `up`, which starts the emulator here,
 * `dev`, its short form for the edit-save-call loop, `backup` and `restore` of the embedded
 * store, and `config where` with the store's format version (these open the store itself).
 * @example await main(["up", "--mode", "dev"])
 */
export function main(argv: string[]): Promise<void> {
  return clientMain(argv, {
    up: (io) => import("./up-command.ts").then((m) => m.default(io)),
    dev: (io) => import("./up-command.ts").then((m) => m.devCommand(io)),
    backup: (io) => import("./backup-command.ts").then((m) => m.backupCommand(io)),
    restore: (io) => import("./backup-command.ts").then((m) => m.restoreCommand(io)),
    config: async (io) => {
      const [{ default: config }, { formatLine }] = await Promise.all([
        import("../src/cli/config.ts"),
        import("../src/storage/format-info.ts"),
      ]);
      return config(io, async (url) => [await formatLine(url)]);
    },
  });
}
