import { defineCommand } from "citty";
import type { VarView } from "../wire/views.ts";
import { type Client, clientFromEnv } from "./client.ts";
import { CliError, type Io, stripOneNewline, UsageError } from "./io.ts";
import { table } from "./output.ts";

/** What the service may say about the var it set or deleted; only `project` is used. */
interface VarAnswer {
  project?: string;
  env?: string;
}

const envArg = {
  type: "string",
  required: false,
  valueHint: "env_id|project",
  description: "The environment: its env_… id or the project's name",
} as const;

function varPath(env: string, name?: string): string {
  const base = `/api/v1/envs/${encodeURIComponent(env)}/vars`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

/** `<project>/default`, from the answer or else from `--env` when it is a project name. */
function where(env: string, answer: VarAnswer | undefined): string {
  if (answer?.project) return `${answer.project}/${answer.env ?? "default"}`;
  return env.startsWith("env_") ? env : `${env}/default`;
}

/** `--connection <project>/<connection>`: AutoKitteh's way to name a connection's var. */
const connectionArg = {
  type: "string",
  valueHint: "project/connection",
  description: "A connection's var: NAME is its short name, set as <connection>__NAME",
} as const;

/**
 * The env and the full var name a `var` command means: `--env E NAME`, or AutoKitteh's
 * `--connection P/C NAME`, which is `--env P <C>__NAME`.
 * @example target({ connection: "demo/gh", name: "pat" }) // { env: "demo", name: "gh__pat" }
 */
export function target(args: { env?: string; connection?: string; name?: string }): {
  env: string;
  name: string;
} {
  const name = args.name ?? "";
  if (args.connection !== undefined) {
    if (args.env !== undefined) throw new UsageError("give --env or --connection, not both");
    const m = /^([^/]+)\/([^/]+)$/.exec(args.connection);
    if (!m) throw new UsageError(`--connection "${args.connection}": write <project>/<connection>`);
    return { env: m[1]!, name: `${m[2]}__${name}` };
  }
  if (args.env === undefined)
    throw new UsageError("give --env <env_id|project> or --connection <project>/<connection>");
  return { env: args.env, name };
}

/**
 * Refuses `--connection P/C` when project P has no connection C: the var would be set for
 * nothing (a typo, a connection not deployed yet). An unknown project is the API's 404.
 */
async function mustExist(client: Client, connection: string): Promise<void> {
  const [project, name] = connection.split("/") as [string, string];
  const { connections } = await client.get<{ connections: { name: string }[] }>(
    `/api/v1/connections?project=${encodeURIComponent(project)}`,
  );
  if (!connections.some((c) => c.name === name)) {
    throw new CliError(`connection "${name}" not found in project "${project}"`);
  }
}

export default function varCommand(io: Io) {
  const set = defineCommand({
    meta: { name: "set", description: "Set a variable or secret (VALUE absent: read stdin)" },
    args: {
      env: envArg,
      connection: connectionArg,
      secret: { type: "boolean", description: "Store it encrypted; never printed again" },
      name: { type: "positional", required: true, description: "The variable's name" },
      value: { type: "positional", required: false, description: "Its value (else stdin)" },
    },
    async run({ args }) {
      const { env, name } = target(args);
      const client = clientFromEnv(io.env);
      if (args.connection !== undefined) await mustExist(client, args.connection);
      let value = args.value;
      if (value === undefined) {
        if (io.stdinIsTTY) io.err(`reading the value of ${name} from stdin; end it with Ctrl-D`);
        value = stripOneNewline(await io.readStdin());
      }
      const res = await client.put<VarAnswer>(varPath(env, name), {
        value,
        secret: Boolean(args.secret),
      });
      io.out(`var "${name}" set in ${where(env, res)}`);
    },
  });
  const list = defineCommand({
    meta: { name: "list", description: "List an environment's variables (secrets masked)" },
    args: { env: { ...envArg, required: true } },
    async run({ args }) {
      const res = await clientFromEnv(io.env).get<{ vars: VarView[] }>(varPath(args.env!));
      if (res.vars.length === 0) return io.out("no vars");
      // The description last, on one line: it is free text, and a row is one line.
      const about = (v: VarView) => (v.description ?? "").replace(/\s+/g, " ").trim();
      const rows = res.vars.map((v) => [
        v.name,
        v.secret ? "yes" : "no",
        v.source,
        v.value,
        about(v),
      ]);
      for (const line of table(["NAME", "SECRET", "SOURCE", "VALUE", "DESCRIPTION"], rows)) {
        io.out(line);
      }
    },
  });
  const remove = defineCommand({
    meta: { name: "delete", description: "Delete a variable" },
    args: {
      env: envArg,
      connection: connectionArg,
      name: { type: "positional", required: true, description: "The variable's name" },
    },
    async run({ args }) {
      const { env, name } = target(args);
      const res = await clientFromEnv(io.env).delete<VarAnswer>(varPath(env, name));
      io.out(`var "${name}" deleted from ${where(env, res)}`);
    },
  });
  return defineCommand({
    meta: { name: "var", description: "Variables and secrets" },
    subCommands: { set, list, delete: remove },
  });
}
