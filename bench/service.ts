import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionRecord } from "../src/model/records.ts";

export interface Service {
  url: string;
  /** The `node bin/cli.mjs up` process: the service itself (tsx runs in it, no wrapper). */
  pid: number;
  /** What this service is, for the table: "default storage", "memory storage", "Python 3.12". */
  label: string;
  /** Its data home (`$XDG_DATA_HOME/hookline`). */
  dataHome: string;
  /** The environment it was started with (XDG homes, SVC_*), for `config where` and the like. */
  env: NodeJS.ProcessEnv;
  api<T>(path: string, init?: RequestInit): Promise<T>;
  /**
   * Deploys `bench/fixtures/<name>` (its `.py` files and `manifest`, default manifest.yaml);
   * returns the project id and trigger name → webhook URL.
   */
  deploy(name: string, manifest?: string): Promise<Deployed>;
  /** Sessions alive in the service (running, queued, or parked), from `/readyz`. */
  active(): Promise<number>;
  /** Polls `/readyz` every `everyMs` until no session is alive; false on timeout. */
  idle(timeoutMs: number, everyMs?: number): Promise<boolean>;
  sessions(projectId: string, state?: string): Promise<SessionRecord[]>;
  /** Its XDG homes' folder, to start another service on (`StartOptions.root`). */
  root: string;
  /**
   * SIGTERM, as Ctrl-C would, then waits for the exit (SIGKILL after 10 s); removes the homes
   * unless `keep`.
   */
  close(keep?: boolean): Promise<void>;
}

export interface Deployed {
  projectId: string;
  hooks: Record<string, string>;
}

export interface StartOptions {
  /** The sessions' Python, given as `SVC_WORKER_PYTHON` (no venv is made under the data home). */
  python: string;
  label: string;
  /** More `SVC_*` variables, e.g. `{ SVC_STORAGE: "memory:" }`; none means the defaults. */
  env?: Record<string, string>;
  /** Extra `node` flags for the service process (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** A home an earlier service left (`close(true)`): this one starts on what that one stored. */
  root?: string;
}

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const cli = fileURLToPath(new URL("../bin/cli.mjs", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Services still running, with their homes: killed and removed if the bench exits first (its
 * watchdog, an uncaught error). Their fork servers exit when the service's pipes close.
 */
const live = new Map<ChildProcess, string>();
process.on("exit", () => {
  for (const [child, root] of live) {
    child.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  }
});

/**
 * The environment a user's shell would give `cli up`, with fresh XDG homes under `root` and no
 * `SVC_*` variable of the bench's own environment leaking in.
 */
function userEnv(root: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_")) env[k] = v;
  return {
    ...env,
    XDG_DATA_HOME: join(root, "data"),
    XDG_CONFIG_HOME: join(root, "config"),
    ...extra,
  };
}

/** Resolves with the URL of the `hookline listening on http://…` line; rejects on an early exit. */
function listening(child: ChildProcess, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const m = /hookline listening on (http:\/\/\S+)/.exec(buffered);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`cli up exited (${code ?? signal}) before listening:\n${output()}`)),
    );
  });
}

/**
 * Our service as a user starts it: a child `node bin/cli.mjs up --mode dev --port 0` with fresh
 * XDG homes and the default storage unless `env` says otherwise. `SVC_WORKER_PYTHON` points at
 * the given Python, which skips the venv a first `cli up` makes (seconds, once per data home).
 * @example const svc = await startService({ python, label: "default storage" }); await svc.close();
 */
export async function startService(opts: StartOptions): Promise<Service> {
  const root = opts.root ?? mkdtempSync(join(tmpdir(), "hookline-bench-"));
  const env = userEnv(root, { SVC_WORKER_PYTHON: opts.python, ...opts.env });
  const child = spawn(
    process.execPath,
    [...(opts.nodeArgs ?? []), cli, "up", "--mode", "dev", "--port", "0"],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  // Kept for an error message; the log is bounded to its last 8 KiB.
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8192);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  live.set(child, root);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      live.delete(child);
      resolve();
    }),
  );
  let url: string;
  try {
    url = await Promise.race([
      listening(child, () => output),
      sleep(60_000).then(() => Promise.reject(new Error(`cli up: not listening after 60 s`))),
    ]);
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  const dataHome = join(root, "data", "hookline");

  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${url}/api/v1${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
    });
    const body = await res.json();
    if (!res.ok)
      throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body as T;
  };
  const active = async () => {
    const res = await fetch(`${url}/readyz`);
    return ((await res.json()) as { sessions: number }).sessions;
  };
  let closed: Promise<void> | null = null;
  return {
    url,
    pid: child.pid!,
    root,
    label: opts.label,
    dataHome,
    env,
    api,
    async deploy(name, manifestFile = "manifest.yaml") {
      const dir = join(fixtures, name);
      const files: Record<string, string> = {};
      for (const file of readdirSync(dir)) {
        if (file.endsWith(".py")) files[file] = readFileSync(join(dir, file)).toString("base64");
      }
      const manifest = readFileSync(join(dir, manifestFile), "utf8");
      const { project_id } = await api<{ project_id: string }>("/deploy", {
        method: "POST",
        body: JSON.stringify({ manifest, manifest_file: "manifest.yaml", files }),
      });
      const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
        `/triggers?project=${project_id}`,
      );
      const hooks = Object.fromEntries(triggers.map((t) => [t.name, url + t.webhook_path]));
      return { projectId: project_id, hooks };
    },
    active,
    async idle(timeoutMs, everyMs = 25) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if ((await active()) === 0) return true;
        await sleep(everyMs);
      }
      return false;
    },
    async sessions(projectId, state) {
      const q = `project=${projectId}&limit=10000${state ? `&state=${state}` : ""}`;
      return (await api<{ sessions: SessionRecord[] }>(`/sessions?${q}`)).sessions;
    },
    close(keep = false) {
      closed ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          await exited;
          clearTimeout(timer);
        }
        live.delete(child);
        if (!keep) rmSync(root, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}

/**
 * `node bin/cli.mjs config where` run with the service's environment: its lines as printed, and
 * the storage line when it prints one. The engine is read, never assumed: when `config where`
 * names none, `engine` says what the data home holds once the service has written to it.
 * @example const { lines, engine } = configWhere(svc);
 */
export function configWhere(svc: Pick<Service, "env" | "dataHome">): {
  lines: string[];
  engine: string;
} {
  const out = execFileSync(process.execPath, [cli, "config", "where"], {
    env: svc.env,
    encoding: "utf8",
  });
  const lines = out.split("\n").filter(Boolean);
  const named = lines.find((l) => /storage|engine|database/i.test(l));
  if (named) return { lines, engine: named.trim() };
  let held = "nothing yet";
  try {
    // One level down too: the store's own layout (namespace folders, a database file) says
    // what wrote it.
    held = readdirSync(svc.dataHome, { withFileTypes: true })
      .map((e) => {
        if (!e.isDirectory()) return e.name;
        const inner = readdirSync(join(svc.dataHome, e.name)).sort();
        const shown = inner.slice(0, 6).join(" ") + (inner.length > 6 ? " …" : "");
        return `${e.name}/ (${shown})`;
      })
      .join(", ");
  } catch {
    // no data home yet
  }
  return {
    lines,
    engine: `not named by \`config where\`; the data home holds: ${held}`,
  };
}
