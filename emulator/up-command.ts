import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { deployProject } from "../src/cli/deploy.ts";
import { CliError, type Io, UsageError } from "../src/cli/io.ts";
import { resolveSettings, type Settings } from "../src/config.ts";
import { box, DevLoop, webhookLines } from "./dev-loop.ts";
import { type RunWatch, showRuns } from "./run-lines.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** What `./start.ts` offers. */
export type StartEmulator = (
  settings: Settings,
  opts: { log: (line: string) => void },
) => Promise<{
  url: string;
  close(): Promise<void>;
  stop?(): Promise<void>;
  /** Followed in dev mode: a line per session that ends (run-lines.ts). */
  sessions?: RunWatch;
}>;

export interface UpDeps {
  startEmulator?: StartEmulator;
  /** Where SIGINT and SIGTERM come from. */
  signals?: Pick<NodeJS.Process, "on">;
  exit?: (code: number) => void;
  /** The dev loop's wait after the last save before it redeploys (ms, default 150). */
  debounceMs?: number;
}

/** What `up` (and `dev`, its short form) is asked to do. */
export interface UpOptions {
  mode?: string;
  port?: string;
  host?: string;
  storage?: string;
  /** A manifest to deploy once the service listens. */
  deploy?: string;
  /** Redeploy `deploy`'s project whenever it changes. */
  watch?: boolean;
  /** No line per session in dev mode. */
  quiet?: boolean;
}

async function loadEmulator(): Promise<StartEmulator> {
  // The emulator (Hono app, Python runtime, storage) loads only for `up`.
  return (await import("./start.ts")).startEmulator;
}

/**
 * The token in `<configHome>/token`, made (32 random bytes, hex, mode 0600) when missing.
 * @example await ensureToken("/home/me/.config/hookline") // "9f2c…"
 */
export async function ensureToken(configHome: string): Promise<string> {
  const file = join(configHome, "token");
  const existing = await readFile(file, "utf8").catch(() => "");
  if (existing.trim()) return existing.trim();
  await mkdir(configHome, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString("hex");
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return token;
}

function port(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535)
    throw new UsageError(`--port: expected 0 to 65535, got "${value}"`);
  return n;
}

const serviceArgs = {
  quiet: {
    type: "boolean",
    description: "Dev mode: no line per session (its trigger, state, time, prints, error)",
  },
  port: {
    type: "string",
    valueHint: "n",
    description: "Port to listen on (default: SVC_PORT, else 9980)",
  },
  host: {
    type: "string",
    description: "Address to listen on (default: SVC_HOST, else 127.0.0.1)",
  },
  storage: {
    type: "string",
    valueHint: "url",
    description:
      "lmdb:<dir>, fs:<dir>, memory: or redis://… (default: SVC_STORAGE, else lmdb in the data home)",
  },
} as const;

export default function upCommand(io: Io, deps: UpDeps = {}) {
  return defineCommand({
    meta: { name: "up", description: "Start the service (the local emulator)" },
    args: {
      mode: {
        type: "enum",
        options: ["dev", "prod"],
        description: "dev: no token, 127.0.0.1 (default: SVC_MODE, else dev)",
      },
      ...serviceArgs,
      deploy: {
        type: "string",
        valueHint: "manifest",
        description: "Deploy this manifest's project once the service listens",
      },
      watch: {
        type: "boolean",
        description: "With --deploy: redeploy whenever the project's files or manifest change",
      },
    },
    run: ({ args }) => runUp(io, deps, args),
  });
}

/** `./manifest.yaml`, else `./autokitteh.yaml`, as `cli deploy` picks. */
function defaultManifest(cwd: string): string {
  for (const name of ["manifest.yaml", "autokitteh.yaml"]) {
    if (existsSync(resolve(cwd, name))) return name;
  }
  throw new CliError(`no manifest.yaml (or autokitteh.yaml) in ${cwd}; name one with --manifest`);
}

/**
 * `cli dev`: `up --mode dev --watch --deploy ./manifest.yaml` (else ./autokitteh.yaml).
 * @example await runCommand(devCommand(processIo()), { rawArgs: ["--port", "0"] })
 */
export function devCommand(io: Io, deps: UpDeps = {}) {
  return defineCommand({
    meta: {
      name: "dev",
      description: "Start the service in dev mode, deploy ./manifest.yaml and redeploy on save",
    },
    args: {
      ...serviceArgs,
      manifest: {
        type: "string",
        alias: "m",
        valueHint: "path",
        description: "The manifest (default ./manifest.yaml, else ./autokitteh.yaml)",
      },
    },
    run: ({ args }) =>
      runUp(io, deps, {
        ...args,
        mode: "dev",
        watch: true,
        deploy: args.manifest || defaultManifest(io.cwd),
      }),
  });
}

/** The settings `up` runs with, from its flags and the environment; refuses what cannot run. */
async function upSettings(
  io: Io,
  args: UpOptions,
): Promise<{ settings: Settings; tokenFile?: string }> {
  const flags: Partial<Settings> = {};
  if (args.mode) flags.mode = args.mode as Settings["mode"];
  const p = port(args.port);
  if (p !== undefined) flags.port = p;
  if (args.host) flags.host = args.host;
  if (args.storage) flags.storage = args.storage;
  let settings: Settings;
  try {
    settings = resolveSettings(flags, io.env);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (settings.mode === "dev" && !LOOPBACK.has(settings.host)) {
    throw new CliError(
      `dev mode serves the API without a token, so it listens on loopback only (got --host ${settings.host}); use --mode prod`,
    );
  }
  if (settings.mode !== "prod" || settings.apiToken) return { settings };
  // Prod mode without SVC_API_TOKEN: the token kept in the config home (made at the first start).
  const apiToken = await ensureToken(settings.configHome);
  return { settings: { ...settings, apiToken }, tokenFile: join(settings.configHome, "token") };
}

type Service = Awaited<ReturnType<StartEmulator>>;

/** Starts the service; an address in use is the user's to change, so it is said in one line. */
async function listen(io: Io, deps: UpDeps, settings: Settings): Promise<Service> {
  const start = deps.startEmulator ?? (await loadEmulator());
  return start(settings, { log: (line) => io.err(line) }).catch((e: unknown) => {
    const err = e as NodeJS.ErrnoException;
    if (err.code !== "EADDRINUSE") throw e;
    throw new CliError(
      `cannot listen on ${settings.host}:${settings.port}: the address is in use (choose another with --port or SVC_PORT)`,
    );
  });
}

/** How `up` stops: on SIGINT/SIGTERM (a second one exits at once), or after a failed deploy. */
interface Stopper {
  /** The dev loop to dispose of at the stop; disposed at once when the stop came first. */
  keep(loop: DevLoop): void;
  /** After a failed deploy: closes the service, unless a signal's stop already does. */
  fail(): Promise<boolean>;
}

function stopOnSignals(io: Io, deps: UpDeps, service: Service): Stopper {
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  let loop: DevLoop | undefined;
  const stop = () => {
    if (stopping) return exit(1); // a second signal: do not wait for close()
    stopping = true;
    io.err("stopping…");
    loop?.dispose();
    (service.stop ? service.stop() : service.close()).then(
      () => exit(0),
      (e: unknown) => {
        io.err(`error: while stopping: ${(e as Error).message}`);
        exit(1);
      },
    );
  };
  const signals = deps.signals ?? process;
  signals.on("SIGINT", stop);
  signals.on("SIGTERM", stop);
  return {
    keep(started) {
      if (stopping) started.dispose();
      else loop = started;
    },
    async fail() {
      if (stopping) return false; // the signal's stop closes the service and sets the exit code
      stopping = true;
      await service.close();
      return true;
    },
  };
}

/**
 * Starts the service and, with `deploy`, deploys a project (and with `watch` keeps redeploying
 * it); returns while the service goes on serving until SIGINT/SIGTERM.
 * @example await runUp(processIo(), {}, { mode: "dev", deploy: "manifest.yaml", watch: true })
 */
export async function runUp(io: Io, deps: UpDeps, args: UpOptions): Promise<void> {
  if (args.watch && !args.deploy) throw new UsageError("--watch needs --deploy <manifest>");
  const manifest = args.deploy ? resolve(io.cwd, args.deploy) : undefined;
  // Watching a manifest that is not there would wait for nothing: say so before starting.
  if (args.watch && manifest && !existsSync(manifest)) {
    throw new CliError(`cannot read ${args.deploy}: no such file`);
  }
  const { settings, tokenFile } = await upSettings(io, args);
  const service = await listen(io, deps, settings);
  // Signals are handled from here on, a deploy included: a stop during it still closes cleanly.
  const stopper = stopOnSignals(io, deps, service);

  io.out(`hookline listening on ${service.url} (mode ${settings.mode})`);
  io.out(`data home: ${settings.dataHome}`);
  io.out(`web UI: ${service.url}/ui`);
  if (tokenFile) io.out(`api token: in ${tokenFile}`);
  // Dev mode: each session, as it ends, in one line with its prints (--quiet: none).
  if (settings.mode === "dev" && !args.quiet && service.sessions) {
    showRuns(service.sessions, service.url, (line) => io.out(line));
  }
  if (!manifest) return;
  const env = { ...io.env, SVC_URL: service.url, SVC_API_TOKEN: settings.apiToken ?? "" };
  try {
    if (args.watch) {
      // A failed deploy here keeps the service up (DevLoop reports it): the next save tries again.
      const url = service.url;
      stopper.keep(await DevLoop.start({ io, manifest, env, url, debounceMs: deps.debounceMs }));
      return;
    }
    const result = await deployProject(io, { manifest }, env);
    // Every trigger, kept ones too: a restart on the same data home creates none.
    for (const line of box(webhookLines(service.url, result.triggers))) io.out(line);
  } catch (e) {
    if (await stopper.fail()) throw e;
  }
}
