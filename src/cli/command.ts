import type { CommandDef } from "citty";

/**
 * A command of the `cli` tree, whatever its arguments: citty types each command by its own
 * arguments, and a tree holds commands of every kind. `any` is the one type argument that
 * admits them all (a command's `setup` and `run` take its own arguments); biome.json allows it
 * in this file only.
 */
export type Command = CommandDef<any>;

/**
 * What citty lets a command give as a value, a promise, or a function of either (its
 * subcommands, its arguments), resolved.
 * @example const subs = await resolved(command.subCommands);
 */
export async function resolved<T>(value: T | Promise<T> | (() => T | Promise<T>)): Promise<T> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}
