import { defineCommand } from "citty";
import { clientFromEnv } from "./client.ts";
import type { Io } from "./io.ts";
import { table } from "./output.ts";

export interface ConnectionView {
  id: string;
  project: string;
  name: string;
  integration: string;
  status: { state: "ready" | "needs" | "no_events"; needs: string[] };
  inbound_path: string;
}

/** `ready`, `needs a or b, c`, or `no events (vars only)`. */
function statusOf(c: ConnectionView): string {
  if (c.status.state === "no_events") return "no events (vars only)";
  return c.status.state === "ready" ? "ready" : `needs ${c.status.needs.join(", ")}`;
}

/**
 * The rows of `connection list`: the URL is the service's (`SVC_URL`) with the inbound path.
 * @example connectionTable([], "http://127.0.0.1:9980") // ["no connections"]
 */
export function connectionTable(connections: ConnectionView[], baseUrl: string): string[] {
  if (connections.length === 0) return ["no connections"];
  return table(
    ["NAME", "PROJECT", "INTEGRATION", "STATUS", "URL"],
    connections.map((c) => [
      c.name,
      c.project,
      c.integration,
      statusOf(c),
      c.inbound_path ? baseUrl + c.inbound_path : "-",
    ]),
  );
}

export default function connectionCommand(io: Io) {
  const list = defineCommand({
    meta: {
      name: "list",
      description: "List connections: status (ready, or the vars they need) and inbound URLs",
    },
    args: {
      project: { type: "string", alias: "p", description: "Only this project's connections" },
    },
    async run({ args }) {
      const query = args.project ? `?project=${encodeURIComponent(args.project)}` : "";
      const client = clientFromEnv(io.env);
      const res = await client.get<{ connections: ConnectionView[] }>(
        `/api/v1/connections${query}`,
      );
      for (const line of connectionTable(res.connections, client.baseUrl)) io.out(line);
    },
  });
  return defineCommand({
    meta: { name: "connection", description: "Connections (GitHub, Slack, HTTP and others)" },
    subCommands: { list },
  });
}
