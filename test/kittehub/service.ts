import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { execa } from "execa";
import type { Emulator } from "../../emulator/start.ts";
import { ensureVenv } from "../../emulator/venv.ts";
import type { Io } from "../../src/cli/io.ts";
import { run as runCli } from "../../src/cli/main.ts";
import type { SessionRecord } from "../../src/model/records.ts";
import type { ConnectionView, TriggerView } from "../../src/wire/views.ts";
import { repoRoot } from "../support/python.ts";
import { startQuietEmulator } from "../support/quiet-emulator.ts";

/** The service a run deploys to, and what the harness asks of it. */
export interface Service {
  url: string;
  python: string;
  /** `cli <argv>` in this process (the real CLI), against this service. */
  cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }>;
  api<T>(path: string, init?: RequestInit): Promise<T>;
  triggers(project: string): Promise<TriggerView[]>;
  connections(project: string): Promise<ConnectionView[]>;
  sessions(project: string): Promise<SessionRecord[]>;
  prints(sessionId: string): Promise<string[]>;
  log: string[];
  close(): Promise<void>;
}

/**
 * The Python sessions run on: a virtual environment made once for the harness under
 * node_modules/.cache, `workflow_sdk` and AutoKitteh's pre-installed packages that this machine's
 * package index has (as `cli up` makes one in its data home).
 */
export function harnessPython(onProgress?: (line: string) => void): Promise<string> {
  const checkout = createHash("sha256").update(repoRoot).digest("hex").slice(0, 8);
  // KITTEHUB_PREINSTALL=off: workflow_sdk alone (a plan whose projects need none of them).
  const preinstall = process.env.KITTEHUB_PREINSTALL !== "off";
  const name = `kittehub-venv-${checkout}${preinstall ? "" : "-bare"}`;
  const venvDir = join(repoRoot, "node_modules", ".cache", name);
  return ensureVenv({ venvDir, repoRoot, preinstall, onProgress });
}

const STAND_IN_DIRS = [
  join(import.meta.dirname, "stand_ins"),
  join(repoRoot, "python-runtime", "tests", "stand_ins"),
  join(repoRoot, "test", "fixtures", "autokitteh-projects", "stand_ins"),
];

/**
 * The folder a stand-in package name stands for: `test/kittehub/stand_ins/<name>` (a folder of
 * packages, put on the path itself), else the package `<name>` of the shared stand-in folders.
 */
export function packageDir(name: string): { dir: string; whole: boolean } | null {
  if (/^pip:[\w.-]+=[\w.]+$/.test(name)) return { dir: name, whole: true };
  const own = join(STAND_IN_DIRS[0]!, name);
  if (existsSync(own)) return { dir: own, whole: true };
  for (const dir of STAND_IN_DIRS.slice(1)) {
    if (existsSync(join(dir, name))) return { dir: join(dir, name), whole: false };
  }
  return null;
}

/**
 * A real package (`pip:<requirement>=<module>`), pip-installed once into a cache folder of its
 * own from this machine's index (python-runtime/tests/packages.py), for a project whose
 * `requirements.txt` was set aside: psycopg2-binary for `psycopg2`, say.
 */
async function pipFolder(python: string, spec: string): Promise<string> {
  const [requirement, module] = spec.split("=") as [string, string];
  const script = [
    "import sys",
    `sys.path.insert(0, ${JSON.stringify(join(repoRoot, "python-runtime"))})`,
    "from tests.packages import installed",
    `print(installed(${JSON.stringify(requirement)}, ${JSON.stringify(module)}))`,
  ].join("\n");
  const r = await execa(python, ["-c", script], { reject: false });
  if (r.exitCode !== 0) throw new Error(`pip:${spec}: ${String(r.stderr).slice(-500)}`);
  return String(r.stdout).trim();
}

/** The one HTTP call every stand-in makes, the harness's own as the shared ones. */
const STANDIN_HTTP = join(repoRoot, "python-runtime", "tests", "stand_ins", "standin_http.py");

/**
 * The PYTHONPATH folders for the named stand-in packages: the own folders as they are, the
 * shared packages linked one by one into a temp folder with `standin_http.py` (which the own
 * stand-ins import too), so that a shared folder's other stand-ins (its `google`) shadow
 * nothing.
 * @example pathsFor(["slack_sdk"]) // ["/tmp/kittehub-pkgs-…"]
 */
export async function pathsFor(
  python: string,
  names: string[],
): Promise<{ paths: string[]; remove: () => void }> {
  const found = names.map((n) => packageDir(n)!);
  const paths: string[] = [];
  for (const f of found.filter((x) => x.whole)) {
    paths.push(f.dir.startsWith("pip:") ? await pipFolder(python, f.dir.slice(4)) : f.dir);
  }
  if (!found.length) return { paths, remove: () => {} };
  const links = mkdtempSync(join(tmpdir(), "kittehub-pkgs-"));
  symlinkSync(STANDIN_HTTP, join(links, "standin_http.py"));
  for (const { dir } of found.filter((f) => !f.whole)) symlinkSync(dir, join(links, basename(dir)));
  return {
    paths: [links, ...paths],
    remove: () => rmSync(links, { recursive: true, force: true }),
  };
}

/**
 * Starts the real service (dev mode, a random port, a scratch data home with LMDB in it, as the
 * tests' quiet emulator keeps it) with
 * `paths` first on its sessions' PYTHONPATH.
 */
export async function startService(
  python: string,
  paths: string[],
  proxy?: string,
): Promise<Service> {
  // The service hands its own environment (PYTHONPATH, a proxy) to each session's Python when
  // it starts it: set for the service's life, put back when it closes.
  const env: Record<string, string | undefined> = {
    PYTHONPATH: [...paths, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
  };
  if (proxy) {
    for (const k of ["HTTP_PROXY", "http_proxy"]) env[k] = proxy;
    for (const k of ["NO_PROXY", "no_proxy"]) env[k] = "127.0.0.1,localhost";
  }
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const restore = () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  Object.assign(process.env, env);
  const log: string[] = [];
  let started: { emulator: Emulator; dataHome: string };
  try {
    started = await startQuietEmulator(python, {}, "kittehub-", (line) => {
      log.push(line);
      if (log.length > 2000) log.splice(0, 1000);
    });
  } catch (e) {
    restore();
    throw e;
  }
  const { emulator, dataHome } = started;
  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${emulator.url}/api/v1${path}`, {
      ...init,
      headers: { "content-type": "application/json", ...init.headers },
    });
    const body = res.status === 204 ? null : await res.json();
    if (!res.ok)
      throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body as T;
  };
  const q = (project: string) => `project=${encodeURIComponent(project)}&limit=1000`;
  return {
    url: emulator.url,
    python,
    log,
    api,
    async cli(...argv) {
      const out: string[] = [];
      const err: string[] = [];
      const io: Io = {
        out: (line) => void out.push(line),
        err: (line) => void err.push(line),
        env: { SVC_URL: emulator.url, XDG_CONFIG_HOME: join(dataHome, "cli-config") },
        cwd: process.cwd(),
        readStdin: async () => "",
        stdinIsTTY: false,
      };
      const code = await runCli(argv, io);
      return { code, out, err };
    },
    triggers: async (p) => (await api<{ triggers: TriggerView[] }>(`/triggers?${q(p)}`)).triggers,
    connections: async (p) =>
      (await api<{ connections: ConnectionView[] }>(`/connections?${q(p)}`)).connections,
    sessions: async (p) => (await api<{ sessions: SessionRecord[] }>(`/sessions?${q(p)}`)).sessions,
    async prints(id) {
      const out = await api<{ prints: { text: string }[] }>(`/sessions/${id}/prints`);
      return out.prints.map((p) => p.text);
    },
    async close() {
      await emulator.close();
      restore();
      rmSync(dataHome, { recursive: true, force: true });
    },
  };
}
