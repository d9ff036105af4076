import { defineCommand } from "citty";
import { clientFromEnv } from "./client.ts";
import type { Io } from "./io.ts";
import { table } from "./output.ts";

export interface TriggerView {
  id: string;
  project: string;
  name: string;
  webhook_path: string;
  event_type: string;
  call: string | null;
  is_sync: boolean;
  is_durable: boolean;
}

/**
 * The rows of `trigger list`.
 * @example triggerTable([]) // ["no triggers"]
 */
export function triggerTable(triggers: TriggerView[]): string[] {
  if (triggers.length === 0) return ["no triggers"];
  return table(
    ["NAME", "PROJECT", "TYPE", "EVENT", "CALL", "WEBHOOK_PATH", "ID"],
    triggers.map((t) => [
      t.name,
      t.project,
      t.is_sync ? "sync" : "async",
      t.event_type || "*",
      t.call ?? "-",
      t.webhook_path,
      t.id,
    ]),
  );
}

export default function triggerCommand(io: Io) {
  const list = defineCommand({
    meta: { name: "list", description: "List triggers and their webhook paths" },
    args: {
      project: { type: "string", alias: "p", description: "Only this project's triggers" },
    },
    async run({ args }) {
      const query = args.project ? `?project=${encodeURIComponent(args.project)}` : "";
      const res = await clientFromEnv(io.env).get<{ triggers: TriggerView[] }>(
        `/api/v1/triggers${query}`,
      );
      for (const line of triggerTable(res.triggers)) io.out(line);
    },
  });
  return defineCommand({
    meta: { name: "trigger", description: "Triggers" },
    subCommands: { list },
  });
}
