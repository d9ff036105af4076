import { defineCommand } from "citty";
import type { StoreValueView } from "../wire/views.ts";
import { clientFromEnv } from "./client.ts";
import type { Io } from "./io.ts";
import { parseCliValue, wireText } from "./wire-text.ts";

const projectArg = {
  type: "string",
  required: true,
  valueHint: "project",
  description: "The project: its name or prj_… id",
} as const;
const keyArg = { type: "positional", required: true, description: "The key" } as const;

function storePath(project: string, key?: string): string {
  const base = `/api/v1/projects/${encodeURIComponent(project)}/store`;
  return key === undefined ? base : `${base}/${encodeURIComponent(key)}`;
}

/**
 * `cli store get|set|del|list --project P`: a project's key-value store (what the handlers
 * reach with `get_value`, `set_value`, …), through the API.
 * @example await runCli(["store", "set", "hits", "0", "--project", "demo"], io);
 */
export default function storeCommand(io: Io) {
  const client = () => clientFromEnv(io.env);
  const get = defineCommand({
    meta: { name: "get", description: "Print a value as JSON (big ints exact)" },
    args: { project: projectArg, key: keyArg },
    async run({ args }) {
      const res = await client().get<StoreValueView>(storePath(args.project, args.key));
      io.out(wireText(res.value));
    },
  });
  const set = defineCommand({
    meta: {
      name: "set",
      description: 'Set a value: VALUE is JSON (5, {"a":1}, \'"5"\'), else taken as text',
    },
    args: {
      project: projectArg,
      key: keyArg,
      value: { type: "positional", required: true, description: "The value" },
    },
    async run({ args }) {
      const res = await client().put<StoreValueView>(storePath(args.project, args.key), {
        value: parseCliValue(args.value),
      });
      io.out(`${res.key} = ${wireText(res.value)}`);
    },
  });
  const del = defineCommand({
    meta: { name: "del", description: "Delete a value (absent: no error)" },
    args: { project: projectArg, key: keyArg },
    async run({ args }) {
      await client().delete(storePath(args.project, args.key));
      io.out(`${args.key} deleted`);
    },
  });
  const list = defineCommand({
    meta: { name: "list", description: "List the keys" },
    args: { project: projectArg },
    async run({ args }) {
      const res = await client().get<{ keys: string[] }>(storePath(args.project));
      if (res.keys.length === 0) return io.out("no keys");
      for (const key of res.keys) io.out(key);
    },
  });
  return defineCommand({
    meta: { name: "store", description: "A project's key-value store: get, set, del, list" },
    subCommands: { get, set, del, list },
  });
}
