import { defineCommand } from "citty";
import { scheduleText, triggerKind } from "../wire/trigger-words.ts";
import type { TriggerView } from "../wire/views.ts";
import { clientFromEnv } from "./client.ts";
import type { Io } from "./io.ts";
import { table } from "./output.ts";

export type { TriggerView };

/** What starts it: a webhook's method, a schedule (with its zone unless UTC), a connection's event. */
function eventOf(t: TriggerView): string {
  return t.type === "schedule" ? scheduleText(t) : t.event_type || "*";
}

/** Its kind, then `, durable` and `, reuse process` where set: options show only where on. */
const typeOf = (t: TriggerView) =>
  [triggerKind(t), t.is_durable && "durable", t.reuse_process && "reuse process"]
    .filter(Boolean)
    .join(", ");

/**
 * The rows of `trigger list`.
 * @example triggerTable([]) // ["no triggers"]
 */
export function triggerTable(triggers: TriggerView[]): string[] {
  if (triggers.length === 0) return ["no triggers"];
  return table(
    ["NAME", "PROJECT", "TYPE", "EVENT", "CALL", "NEXT_FIRE", "WEBHOOK_PATH", "ID"],
    triggers.map((t) => [
      t.name,
      t.project,
      typeOf(t),
      eventOf(t),
      t.call ?? "-",
      t.next_fire ?? "-",
      t.webhook_path || "-",
      t.id,
    ]),
  );
}

export default function triggerCommand(io: Io) {
  const list = defineCommand({
    meta: {
      name: "list",
      description: "List triggers, their webhook paths and schedules' next firings",
    },
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
