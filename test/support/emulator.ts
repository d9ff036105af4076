import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { Emulator } from "../../emulator/start.ts";
import type { Settings } from "../../src/config.ts";
import type { SessionRecord } from "../../src/model/records.ts";
import { testPython } from "./python.ts";
import { startQuietEmulator } from "./quiet-emulator.ts";

export interface EmulatorHandle {
  url: string;
  dataHome: string;
  /** A call to the management API; throws on a non-2xx answer unless `allowError`. */
  api<T = unknown>(path: string, init?: RequestInit & { allowError?: boolean }): Promise<T>;
  /** Deploys a folder (manifest.yaml and every file beside it); returns trigger name → URL. */
  deploy(dir: string): Promise<Record<string, string>>;
  /** Resolves with the session's record once it has ended (over the watch stream). */
  ended(sessionId: string): Promise<SessionRecord>;
  prints(sessionId: string): Promise<string[]>;
  emulator: Emulator;
}

/** Every file under `dir` but dot files and caches, as deploy sends them. */
export function folderFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name.startsWith(".") || name === "__pycache__") continue;
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(dir, path)] = readFileSync(path).toString("base64");
    }
  };
  walk(dir);
  return out;
}

/**
 * A real emulator for the tests of one file: random port, its own data home, the tests' Python
 * venv, LMDB storage in the data home unless given. Started in beforeAll, closed (Python reaped) in afterAll.
 * Its log lines go to `log` (nowhere unless given).
 */
export function useEmulator(
  flags: Partial<Settings> = {},
  log?: (line: string) => void,
): EmulatorHandle {
  const handle = {} as EmulatorHandle;
  let dataHome = "";
  beforeAll(async () => {
    const started = await startQuietEmulator(await testPython(), flags, undefined, log);
    const { emulator } = started;
    dataHome = started.dataHome;
    const api = async <T>(path: string, init: RequestInit & { allowError?: boolean } = {}) => {
      const res = await fetch(`${emulator.url}/api/v1${path}`, {
        ...init,
        headers: { "content-type": "application/json", ...init.headers },
      });
      const body = res.status === 204 ? null : await res.json();
      if (!res.ok && !init.allowError) {
        throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${JSON.stringify(body)}`);
      }
      return body as T;
    };
    Object.assign(handle, {
      url: emulator.url,
      dataHome,
      emulator,
      api,
      async deploy(dir: string) {
        const manifest = readFileSync(join(dir, "manifest.yaml"), "utf8");
        const files = folderFiles(dir);
        delete files["manifest.yaml"];
        const { project_id } = await api<{ project_id: string }>("/deploy", {
          method: "POST",
          body: JSON.stringify({ manifest, manifest_file: "manifest.yaml", files }),
        });
        const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
          `/triggers?project=${project_id}`,
        );
        return Object.fromEntries(triggers.map((t) => [t.name, emulator.url + t.webhook_path]));
      },
      async ended(sessionId: string) {
        const res = await fetch(`${emulator.url}/api/v1/sessions/${sessionId}/watch`);
        const text = await res.text();
        const end = text.split("\n\n").find((block) => block.startsWith("event: end"));
        if (!end) throw new Error(`watch of ${sessionId} closed without an end event`);
        return JSON.parse(
          end
            .split("\n")
            .find((l) => l.startsWith("data: "))!
            .slice(6),
        );
      },
      async prints(sessionId: string) {
        const out = await api<{ prints: { text: string }[] }>(`/sessions/${sessionId}/prints`);
        return out.prints.map((p) => p.text);
      },
    } satisfies EmulatorHandle);
  }, 180_000);
  afterAll(async () => {
    await handle.emulator?.close();
    if (dataHome) rmSync(dataHome, { recursive: true, force: true });
  }, 60_000);
  return handle;
}
