import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { defineCommand, renderUsage, runCommand } from "citty";
import { packageRoot } from "../package-root.ts";
import { type Command, resolved } from "./command.ts";
import { CliError, ExitError, type Io, processIo, UsageError } from "./io.ts";
import { checkStrict } from "./strict.ts";

const pkg = JSON.parse(
  readFileSync(join(packageRoot(import.meta.url), "package.json"), "utf8"),
) as {
  version: string;
};

/**
 * Commands a host adds to the client's (the emulator adds `up`, `backup`, `restore`, `storage`), or
 * replaces, each loaded when it runs.
 */
export type HostCommands = Record<string, (io: Io) => Promise<Command>>;

/**
 * The `cli` command tree: the API client's commands, after the host's. Each group loads only
 * when it runs.
 * @example await runCommand(rootCommand(processIo()), { rawArgs: ["config", "where"] })
 */
export function rootCommand(io: Io, host: HostCommands = {}): Command {
  const hosted = Object.fromEntries(
    Object.entries(host).map(([name, load]) => [name, () => load(io)]),
  );
  return defineCommand({
    meta: { name: "cli", version: pkg.version, description: "Hookline: Python webhook handlers" },
    subCommands: {
      deploy: () => import("./deploy.ts").then((m) => m.default(io)),
      project: () => import("./project.ts").then((m) => m.default(io)),
      trigger: () => import("./trigger.ts").then((m) => m.default(io)),
      connection: () => import("./connection.ts").then((m) => m.default(io)),
      env: () => import("./env.ts").then((m) => m.default(io)),
      var: () => import("./var.ts").then((m) => m.default(io)),
      session: () => import("./session.ts").then((m) => m.default(io)),
      store: () => import("./kv.ts").then((m) => m.default(io)),
      config: () => import("./config.ts").then((m) => m.default(io)),
      // Last: a host may replace a client command (the emulator's `config` reads the store).
      ...hosted,
    },
  });
}

interface Resolution {
  cmd: Command;
  /** The words that name it: `["cli", "session", "list"]`. */
  names: string[];
  rest: string[];
  problem?: string;
}

/** Follow the subcommand names in `argv` down to the command that runs. */
async function resolve(root: Command, argv: string[]): Promise<Resolution> {
  let at: Resolution = { cmd: root, names: ["cli"], rest: argv };
  for (;;) {
    const subs = await resolved(at.cmd.subCommands);
    if (!subs || Object.keys(subs).length === 0) return at;
    const [word, ...rest] = at.rest;
    if (word === undefined) return { ...at, problem: "missing command" };
    if (word.startsWith("-")) return { ...at, problem: `unknown option "${word}"` };
    const sub = Object.hasOwn(subs, word) ? subs[word] : undefined;
    if (!sub) return { ...at, problem: `unknown command "${word}"` };
    at = { cmd: await resolved(sub), names: [...at.names, word], rest };
  }
}

async function usage(at: Resolution): Promise<string> {
  const parent = { meta: { name: at.names.slice(0, -1).join(" "), version: pkg.version } };
  const text = at.names.length > 1 ? await renderUsage(at.cmd, parent) : await renderUsage(at.cmd);
  // citty pads every column, the last included; drop the colours and the trailing blanks.
  return stripVTControlCharacters(text)
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n");
}

function isHelp(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/**
 * Run one `cli` invocation and return its exit code: 0, or 1 for any failure (usage errors
 * included). Never calls `process.exit` itself, except `up` on a signal. Tests may pass their own
 * `root` (commands with fakes wired in).
 * @example await run(["config", "where"], processIo()) // 0
 */
export async function run(argv: string[], io: Io, root = rootCommand(io)): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    io.out(pkg.version);
    return 0;
  }
  const help = isHelp(argv);
  const at = await resolve(root, help ? argv.filter((a) => a !== "--help" && a !== "-h") : argv);
  if (help && (!at.problem || at.problem === "missing command")) {
    io.out(await usage(at));
    return 0;
  }
  try {
    if (at.problem) throw new UsageError(at.problem);
    await checkStrict(at.cmd, at.rest);
    await runCommand(at.cmd, { rawArgs: at.rest });
    return 0;
  } catch (e) {
    if (e instanceof ExitError) return e.code;
    const message = stripVTControlCharacters(e instanceof Error ? e.message : String(e));
    if (e instanceof UsageError || (e instanceof Error && e.name === "CLIError")) {
      io.err(await usage(at));
      io.err("");
    } else if (!(e instanceof CliError) && io.env.HOOKLINE_DEBUG && e instanceof Error) {
      io.err(e.stack ?? message);
    }
    io.err(`error: ${message}`);
    return 1;
  }
}

/**
 * The entry point of a `cli` binary, with the host's commands.
 * @example await main(process.argv.slice(2))
 */
export async function main(argv: string[], host: HostCommands = {}): Promise<void> {
  const io = processIo();
  const code = await run(argv, io, rootCommand(io, host));
  if (code !== 0) process.exitCode = code;
}
