import { spawn } from "node:child_process";
import { defineCommand } from "citty";
import type { ConnectionView } from "../wire/views.ts";
import { type Client, clientFromEnv } from "./client.ts";
import { CliError, type Io, UsageError } from "./io.ts";
import { table } from "./output.ts";

export type { ConnectionView };

/**
 * `ready`, `needs a or b, c`, or `no events (vars only)`; a connection that needs authorizing
 * says the command that does it.
 */
function statusOf(c: ConnectionView): string {
  if (c.status.state === "no_events") return "no events (vars only)";
  if (c.status.state === "ready") return "ready";
  const how = `authorization (cli connection authorize ${c.project}/${c.name})`;
  return `needs ${c.status.needs.map((n) => (n === "authorization" ? how : n)).join(", ")}`;
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
  const authorize = defineCommand({
    meta: {
      name: "authorize",
      description:
        "Print the link that authorizes a connection with OAuth (opens a browser where there is one)",
    },
    args: {
      ref: { type: "positional", required: true, description: "<project>/<connection>" },
      open: {
        type: "boolean",
        default: true,
        description: "Open a browser (--no-open: only print)",
      },
    },
    async run({ args }) {
      const link = await authorizeLink(clientFromEnv(io.env), String(args.ref));
      io.out(link);
      if (args.open && canOpenBrowser(io)) openBrowser(link);
    },
  });
  return defineCommand({
    meta: { name: "connection", description: "Connections (GitHub, Slack, HTTP and others)" },
    subCommands: { list, authorize },
  });
}

/**
 * The start link of a connection's authorization: the service makes it (with a ticket when it
 * needs the API token, which a browser cannot send), so the link is good for 10 minutes.
 * @example await authorizeLink(client, "triage/gmail") // "http://127.0.0.1:9980/oauth/start/gmail?cid=con_…"
 */
export async function authorizeLink(client: Client, ref: string): Promise<string> {
  const m = /^([^/]+)\/([^/]+)$/.exec(ref);
  if (!m) throw new UsageError(`expected <project>/<connection>, got "${ref}"`);
  const [, project, name] = m as unknown as [string, string, string];
  const res = await client.get<{ connections: ConnectionView[] }>(
    `/api/v1/connections?project=${encodeURIComponent(project)}`,
  );
  const conn = res.connections.find((c) => c.name === name);
  if (!conn) throw new CliError(`no connection "${name}" in project "${project}"`);
  const q = `cid=${encodeURIComponent(conn.id)}&link=1`;
  const { link } = await client.get<{ link: string }>(`/oauth/start/${conn.integration}?${q}`);
  return link;
}

/** A browser is there to open: a terminal on a desktop, and not CI. */
function canOpenBrowser(io: Io): boolean {
  if (!process.stdout.isTTY || io.env.CI) return false;
  if (process.platform === "darwin" || process.platform === "win32") return true;
  return Boolean(io.env.DISPLAY || io.env.WAYLAND_DISPLAY);
}

function openBrowser(link: string): void {
  const [cmd, ...args] =
    process.platform === "darwin"
      ? ["open", link]
      : process.platform === "win32"
        ? ["cmd", "/c", "start", "", link]
        : ["xdg-open", link];
  const child = spawn(cmd!, args, { stdio: "ignore", detached: true });
  child.on("error", () => {}); // no opener: the link is printed all the same
  child.unref();
}
