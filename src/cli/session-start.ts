import { defineCommand } from "citty";
import type { SessionRecord } from "../model/records.ts";
import { clientFromEnv } from "./client.ts";
import { allValues } from "./deploy.ts";
import { CliError, type Io } from "./io.ts";
import { printWatch } from "./session-watch.ts";

/**
 * `--input key=<JSON value>` flags as the inputs of a manual run (a later key wins, as in
 * AutoKitteh's `ak session start`). A flag without `=`, with an empty key or a value that is not
 * JSON is refused before anything is sent.
 * @example parseInputs(["user=\"ada\"", "n=3"]) // { user: "ada", n: 3 }
 */
export function parseInputs(flags: string[]): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const flag of flags) {
    const at = flag.indexOf("=");
    if (at < 1) throw new CliError(`--input "${flag}": expected key=<JSON value>`);
    const [key, text] = [flag.slice(0, at), flag.slice(at + 1)];
    try {
      inputs[key] = JSON.parse(text);
    } catch {
      throw new CliError(
        `--input "${flag}": ${JSON.stringify(text)} is not a JSON value (a string is quoted: ${key}='"${text}"')`,
      );
    }
  }
  return inputs;
}

/**
 * `cli session start`: a session started by hand, as AutoKitteh's `ak session start` does: an
 * entry point of the project's active deployment, inputs as its `event.data`.
 */
export default function sessionStartCommand(io: Io) {
  return defineCommand({
    meta: { name: "start", description: "Start a session by hand: an entry point, with inputs" },
    args: {
      project: {
        type: "string",
        alias: "p",
        required: true,
        description: "The project (name or id)",
      },
      entrypoint: {
        type: "string",
        alias: "e",
        required: true,
        valueHint: "file.py:function",
        description: "What to run: a top-level function of a file of the active deployment",
      },
      input: {
        type: "string",
        alias: "i",
        valueHint: "key=json",
        description: "An input, key=<JSON value> (repeatable): the session's event.data[key]",
      },
      durable: { type: "boolean", description: "Run it as a durable session" },
      watch: { type: "boolean", alias: "w", description: "Follow its log until it ends" },
    },
    async run({ args, rawArgs }) {
      const inputs = parseInputs(allValues(rawArgs, "input", "i"));
      const res = await clientFromEnv(io.env).post<{ session: SessionRecord }>(
        `/api/v1/projects/${encodeURIComponent(args.project)}/sessions`,
        { entrypoint: args.entrypoint, inputs, durable: Boolean(args.durable) },
      );
      const { id, state } = res.session;
      io.out(`session ${id}: ${state} (${args.entrypoint}, started by hand)`);
      if (args.watch) await printWatch(io, id);
    },
  });
}
