import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { defineCommand } from "citty";
import * as v from "valibot";
// The wire shape of the deploy answer (valibot only): the CLI is a client of the API.
import { serviceUrl } from "../config.ts";
import { type DeployResult, DeployResultSchema, resultLines } from "../wire/deploy-result.ts";
import { clientFromEnv } from "./client.ts";
import { collectFiles } from "./files.ts";
import { CliError, ExitError, type Io, UsageError } from "./io.ts";

/** The part of `src/manifest` the CLI uses: it throws `ManifestError` (with `issues`) on a bad manifest. */
type ParseManifest = (text: string, file: string) => unknown;

async function loadParseManifest(): Promise<ParseManifest> {
  return (await import("../manifest/index.ts")).parseManifest;
}

function isManifestError(e: unknown): e is Error & { issues: unknown[] } {
  return (
    e instanceof Error &&
    (e.name === "ManifestError" || Array.isArray((e as { issues?: unknown }).issues))
  );
}

/** `./manifest.yaml`, else `./autokitteh.yaml`. */
function defaultManifest(cwd: string): string {
  for (const name of ["manifest.yaml", "autokitteh.yaml"]) {
    if (existsSync(resolve(cwd, name))) return name;
  }
  throw new CliError(`no manifest.yaml (or autokitteh.yaml) in ${cwd}; name one with --manifest`);
}

/** Every value of a repeatable string flag, which citty alone keeps only the last of. */
export function allValues(rawArgs: string[], name: string, short?: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i] ?? "";
    if (arg === "--") break;
    if (arg === `--${name}` || (short && arg === `-${short}`)) {
      const next = rawArgs[++i];
      if (next !== undefined) values.push(next);
    } else if (arg.startsWith(`--${name}=`)) values.push(arg.slice(name.length + 3));
  }
  return values;
}

export default function deployCommand(io: Io, parseManifest?: ParseManifest) {
  return defineCommand({
    meta: { name: "deploy", description: "Check the manifest, upload the project and activate it" },
    args: {
      manifest: {
        type: "string",
        alias: "m",
        valueHint: "path",
        description: "The manifest (default ./manifest.yaml, else ./autokitteh.yaml)",
      },
      file: {
        type: "string",
        alias: "f",
        valueHint: "path",
        description: "Upload exactly this file (repeatable); default: the whole folder",
      },
      dir: {
        type: "string",
        alias: "d",
        valueHint: "path",
        description: "Upload this folder instead of the manifest's folder",
      },
      "check-replay": {
        type: "boolean",
        description:
          "First replay the project's in-flight durable sessions and its N newest ended ones (default 20) against the new code; stop if one in flight diverges",
      },
      n: {
        type: "positional",
        required: false,
        valueHint: "N",
        description: "With --check-replay: how many ended sessions to replay (default 20)",
      },
      force: {
        type: "boolean",
        description: "With --check-replay: deploy even when an in-flight session diverges",
      },
    },
    async run({ args, rawArgs }) {
      await deployProject(io, {
        manifest: args.manifest,
        dir: args.dir,
        files: allValues(rawArgs, "file", "f"),
        parseManifest,
        ...replayOptions(args),
      });
    },
  });
}

/** Ended sessions `--check-replay` replays when no N is given. */
export const DEFAULT_CHECK_ENDED = 20;

/** `--check-replay [N]` and `--force` as the deploy request's `check_replay` and `force`. */
function replayOptions(args: { "check-replay"?: boolean; n?: string; force?: boolean }) {
  const { n, force } = args;
  if (!args["check-replay"]) {
    if (n !== undefined) throw new UsageError(`unexpected argument "${n}"`);
    if (force) throw new UsageError("--force goes with --check-replay");
    return {};
  }
  if (n !== undefined && !/^\d{1,4}$/.test(n))
    throw new UsageError(`--check-replay: expected a number of ended sessions, got "${n}"`);
  return { checkReplay: n === undefined ? DEFAULT_CHECK_ENDED : Number(n), force: force === true };
}

/** The service's answer, checked: a service of another version may answer otherwise. */
function deployResult(answer: unknown): DeployResult {
  const checked = v.safeParse(DeployResultSchema, answer);
  if (checked.success) return checked.output;
  const issue = checked.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join(".") || "body";
  throw new CliError(
    `the service answered the deploy with an unexpected shape (${path}: ${issue.message})`,
  );
}

/**
 * Deploys a project folder: checks the manifest locally (errors as `file:line: path: message`
 * lines on stderr, exit 1), uploads, prints the progress notes on stderr and the `[plan]`/`[exec]`
 * lines (rendered from the structured answer) on stdout, and returns that answer.
 * `env` names the service (SVC_URL, token); `up --deploy` passes the one it just started.
 * @example const { triggers } = await deployProject(io, { manifest: "manifest.yaml" });
 */
export async function deployProject(
  io: Io,
  opts: {
    manifest?: string;
    dir?: string;
    files?: string[];
    parseManifest?: ParseManifest;
    /** Ended sessions to replay first (`--check-replay N`); absent: no check. */
    checkReplay?: number;
    force?: boolean;
  },
  env: NodeJS.ProcessEnv = io.env,
): Promise<DeployResult> {
  const manifestPath = opts.manifest || defaultManifest(io.cwd);
  const fullPath = resolve(io.cwd, manifestPath);
  const text = await readFile(fullPath, "utf8").catch(() => {
    throw new CliError(`cannot read ${manifestPath}: no such file`);
  });
  const file = basename(fullPath);
  try {
    await (opts.parseManifest ?? (await loadParseManifest()))(text, file);
  } catch (e) {
    if (!isManifestError(e)) throw e;
    for (const line of e.message.split("\n")) io.err(line);
    throw new ExitError(1);
  }
  const files = await collectFiles({
    root: opts.dir ? resolve(io.cwd, opts.dir) : dirname(fullPath),
    manifest: fullPath,
    files: opts.files ?? [],
    cwd: io.cwd,
  });
  // The first deploy builds the Python environment (seconds): say so rather than sit silent.
  const slow = setTimeout(
    () => io.err("deploying… (a first deploy also creates the Python environment)"),
    1500,
  );
  const answer = await clientFromEnv(env)
    .post<unknown>("/api/v1/deploy", {
      manifest: text,
      manifest_file: file,
      files,
      ...(opts.checkReplay !== undefined && { check_replay: opts.checkReplay, force: opts.force }),
    })
    .finally(() => clearTimeout(slow));
  const result = deployResult(answer);
  for (const line of result.progress) io.err(line);
  for (const line of resultLines(result, serviceUrl(env))) io.out(line);
  return result;
}
