import { type ParseArgsConfig, parseArgs } from "node:util";
import type { ArgsDef } from "citty";
import { type Command, resolved } from "./command.ts";
import { UsageError } from "./io.ts";

/** A command's arguments as `parseArgs` reads them: its options, its booleans, its positionals. */
interface Grammar {
  options: NonNullable<ParseArgsConfig["options"]>;
  /** Boolean options: `--no-<name>` is theirs too. */
  booleans: Set<string>;
  positionals: number;
}

/**
 * Refuses what citty lets pass: unknown options, a flag without its value, extra arguments
 * (a `UsageError` naming the first).
 * @example await checkStrict(command, ["--projct", "x"]) // UsageError: unknown option "--projct"
 */
export async function checkStrict(cmd: Command, rest: string[]): Promise<void> {
  const { options, booleans, positionals } = grammarOf(await resolved(cmd.args ?? {}));
  const end = rest.indexOf("--");
  // citty reads `--no-<flag>` as the flag set to false; parseArgs knows no such form.
  const args = rest.filter(
    (a, i) => (end >= 0 && i >= end) || !(a.startsWith("--no-") && booleans.has(a.slice(5))),
  );
  let parsed: { positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw usageError(e as Error & { code?: string });
  }
  const extra = parsed.positionals[positionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
}

/** What citty's argument definitions allow, as `parseArgs` options (aliases included). */
function grammarOf(defs: ArgsDef): Grammar {
  const grammar: Grammar = { options: {}, booleans: new Set(), positionals: 0 };
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") {
      grammar.positionals++;
      continue;
    }
    const type = def.type === "boolean" ? "boolean" : "string";
    if (type === "boolean") grammar.booleans.add(name);
    grammar.options[name] = { type, multiple: true };
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const alias of aliases) {
      if (alias.length === 1) grammar.options[name] = { type, multiple: true, short: alias };
      else grammar.options[alias] = { type, multiple: true };
    }
  }
  return grammar;
}

/** `parseArgs`'s complaint in the CLI's words: its first sentence, an unknown option named. */
function usageError(err: Error & { code?: string }): UsageError {
  const option = /'([^']+)'/.exec(err.message)?.[1] ?? "";
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    // Not shaped like an option's name: a value (a pasted key, a secret) is never echoed.
    if (!/^--?[A-Za-z][\w-]{0,40}$/.test(option)) {
      return new UsageError(
        'unknown option: an argument starting with "-" is not an option of this command (a value that starts with "-" goes after "--", or on stdin)',
      );
    }
    return new UsageError(`unknown option "${option}"`);
  }
  return new UsageError(err.message.split(". ")[0] ?? err.message);
}
