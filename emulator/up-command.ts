import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { defineCommand } from "citty";
import { deployProject } from "../src/cli/deploy.ts";
import { CliError, type Io, UsageError } from "../src/cli/io.ts";
import { resolveSettings, type Settings } from "../src/config.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** What `./start.ts` offers. */
export type StartEmulator = (
  settings: Settings,
  opts: { log: (line: string) => void },
) => Promise<{ url: string; close(): Promise<void> }>;

export interface UpDeps {
  startEmulator?: StartEmulator;
  /** Where SIGINT and SIGTERM come from. */
  signals?: Pick<NodeJS.Process, "on">;
  exit?: (code: number) => void;
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

export default function upCommand(io: Io, deps: UpDeps = {}) {
  return defineCommand({
    meta: { name: "up", description: "Start the service (the local emulator)" },
    args: {
      mode: {
        type: "enum",
        options: ["dev", "prod"],
        description: "dev: no token, 127.0.0.1 (default: SVC_MODE, else dev)",
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
      deploy: {
        type: "string",
        valueHint: "manifest",
        description: "Deploy this manifest's project once the service listens",
      },
    },
    async run({ args }) {
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
      let tokenFile: string | undefined;
      if (settings.mode === "prod" && !settings.apiToken) {
        settings = { ...settings, apiToken: await ensureToken(settings.configHome) };
        tokenFile = join(settings.configHome, "token");
      }
      const start = deps.startEmulator ?? (await loadEmulator());
      const service = await start(settings, { log: (line) => io.err(line) }).catch((e: unknown) => {
        const err = e as NodeJS.ErrnoException;
        if (err.code !== "EADDRINUSE") throw e;
        throw new CliError(
          `cannot listen on ${settings.host}:${settings.port}: the address is in use (choose another with --port or SVC_PORT)`,
        );
      });
      // Signals are handled from here on, a deploy included: a stop during it still closes cleanly.
      const exit = deps.exit ?? ((code: number) => process.exit(code));
      let stopping = false;
      const stop = () => {
        if (stopping) return exit(1); // a second signal: do not wait for close()
        stopping = true;
        io.err("stopping…");
        service.close().then(
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

      io.out(`hookline listening on ${service.url} (mode ${settings.mode})`);
      io.out(`data home: ${settings.dataHome}`);
      if (tokenFile) io.out(`api token: in ${tokenFile}`);
      if (args.deploy) {
        const env = { ...io.env, SVC_URL: service.url, SVC_API_TOKEN: settings.apiToken ?? "" };
        try {
          const result = await deployProject(io, { manifest: args.deploy }, env);
          // Every trigger, kept ones too: a restart on the same data home creates none.
          for (const t of result.triggers) {
            io.out(`webhook "${t.name}": ${service.url}${t.webhook_path}`);
          }
        } catch (e) {
          if (stopping) return; // the signal's stop closes the service and sets the exit code
          stopping = true;
          await service.close();
          throw e;
        }
      }
    },
  });
}
