import { defineCommand } from "citty";
import { CliError, type Io } from "../src/cli/io.ts";

/**
 * `cli storage copy --from <url> --to <url>`: every record of one store copied into an empty
 * one, the move of a Redis store to PostgreSQL among them (docs/scale-out.md). The drivers
 * load when it runs, not for `cli --help`.
 * @example await run(["storage", "copy", "--from", "redis://127.0.0.1:6379", "--to", "postgres://db/hookline"], io)
 */
export function storageCommand(io: Io) {
  const copy = defineCommand({
    meta: {
      name: "copy",
      description:
        "Copy every record of one store into an empty one (the service stopped), e.g. Redis to PostgreSQL",
    },
    args: {
      from: {
        type: "string",
        required: true,
        description: "The store to copy (a SVC_STORAGE value)",
      },
      to: { type: "string", required: true, description: "The empty store to copy into" },
    },
    async run({ args }) {
      const { copyStore } = await import("../src/storage/copy.ts");
      try {
        const { keys, format } = await copyStore(args.from, args.to);
        io.out(
          `copied: ${keys} keys (storage format ${format}); start the service with SVC_STORAGE set to the new store`,
        );
      } catch (e) {
        throw new CliError((e as Error).message.split("\n")[0] ?? String(e));
      }
    },
  });
  return defineCommand({
    meta: { name: "storage", description: "Work on a store itself" },
    subCommands: { copy: () => copy },
  });
}
