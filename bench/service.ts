import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Emulator, startQuietEmulator } from "../emulator/start.ts";
import type { Settings } from "../src/config.ts";
import type { SessionRecord } from "../src/model/records.ts";

export interface Service {
  url: string;
  emulator: Emulator;
  api<T>(path: string, init?: RequestInit): Promise<T>;
  /** Deploys `bench/fixtures/<name>`; returns the project id and trigger name → webhook URL. */
  deploy(name: string): Promise<{ projectId: string; hooks: Record<string, string> }>;
  /** Sessions alive in the service (running, queued, or parked), from `/readyz`. */
  active(): Promise<number>;
  /** Polls `/readyz` every `everyMs` until no session is alive; false on timeout. */
  idle(timeoutMs: number, everyMs?: number): Promise<boolean>;
  sessions(projectId: string, state?: string): Promise<SessionRecord[]>;
  close(): Promise<void>;
}

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Our service in this process, as the tests start it: `startEmulator` with memory storage, a
 * random port, a temporary data home, dev mode and a quiet log.
 * @example const svc = await startService(python, { evictAfterMs: 100 }); await svc.close();
 */
export async function startService(
  python: string,
  flags: Partial<Settings> = {},
): Promise<Service> {
  const { emulator, dataHome } = await startQuietEmulator(python, flags, "hookline-bench-");
  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${emulator.url}/api/v1${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
    });
    const body = await res.json();
    if (!res.ok)
      throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body as T;
  };
  const active = async () => {
    const res = await fetch(`${emulator.url}/readyz`);
    return ((await res.json()) as { sessions: number }).sessions;
  };
  return {
    url: emulator.url,
    emulator,
    api,
    async deploy(name) {
      const dir = join(fixtures, name);
      const files: Record<string, string> = {};
      for (const file of readdirSync(dir)) {
        if (file.endsWith(".py")) files[file] = readFileSync(join(dir, file)).toString("base64");
      }
      const manifest = readFileSync(join(dir, "manifest.yaml"), "utf8");
      const { project_id } = await api<{ project_id: string }>("/deploy", {
        method: "POST",
        body: JSON.stringify({ manifest, manifest_file: "manifest.yaml", files }),
      });
      const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
        `/triggers?project=${project_id}`,
      );
      const hooks = Object.fromEntries(
        triggers.map((t) => [t.name, emulator.url + t.webhook_path]),
      );
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
    async close() {
      await emulator.close();
      rmSync(dataHome, { recursive: true, force: true });
    },
  };
}
