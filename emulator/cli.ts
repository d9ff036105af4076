import { main as clientMain } from "../src/cli/main.ts";

/**
 * `cli` / `hookline`: the API client's commands plus `up`, which starts the emulator here, and
 * `dev`, its short form for the edit-save-call loop.
 * @example await main(["up", "--mode", "dev"])
 */
export function main(argv: string[]): Promise<void> {
  return clientMain(argv, {
    up: (io) => import("./up-command.ts").then((m) => m.default(io)),
    dev: (io) => import("./up-command.ts").then((m) => m.devCommand(io)),
  });
}
