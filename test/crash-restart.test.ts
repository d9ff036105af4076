import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";

/**
 * The service as a user starts it (`cli up --mode dev`, a fresh data home, so the default
 * engine: lmdb, sync=normal) is SIGKILLed in the middle of a burst of webhooks. Started again:
 * every event answered 202 is there through the API, and the temp folders the killed
 * process's fork server left behind are gone.
 */

const MANIFEST = `version: v2
project:
  name: burst
triggers:
  - name: hit
    type: webhook
    call: handlers.py:hit
`;
const HANDLERS = "def hit(event):\n    pass\n";

describe("a service killed during a burst of webhooks", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-crash-"));
  const tmp = join(home, "tmp"); // the service's TMPDIR, so its temp folders can be counted
  const project = join(home, "project");
  let service: ResultPromise | null = null;
  afterAll(async () => {
    try {
      if (service?.pid) process.kill(-service.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await service?.catch(() => {});
    rmSync(home, { recursive: true, force: true });
  });

  async function start(port: number, python: string): Promise<string> {
    service = execa(
      "node",
      [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "dev", "--port", String(port)],
      {
        env: {
          XDG_DATA_HOME: join(home, "data"),
          XDG_CONFIG_HOME: join(home, "config"),
          SVC_WORKER_PYTHON: python,
          TMPDIR: tmp,
        },
        extendEnv: true,
        detached: true, // its own process group, so one kill reaches every child
        reject: false,
      },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 30_000);
    return url;
  }

  const runDirs = () => readdirSync(tmp).filter((n) => n.startsWith("hookline-run-"));

  it("keeps every accepted event, and the next start removes the dead process's temp folders", async () => {
    mkdirSync(tmp);
    mkdirSync(project);
    writeFileSync(join(project, "manifest.yaml"), MANIFEST);
    writeFileSync(join(project, "handlers.py"), HANDLERS);
    const python = await testPython();
    const port = await freePort();
    let url = await start(port, python);
    expect((await deployFolder(url, project)).status).toBe(200);
    expect(existsSync(join(home, "data", "hookline", "db", "data.mdb"))).toBe(true);
    const { triggers } = (await (await fetch(`${url}/api/v1/triggers?project=burst`)).json()) as {
      triggers: { webhook_path: string }[];
    };
    const hook = url + triggers[0]!.webhook_path;

    // Eight clients post until the service dies; the kill comes once 150 were accepted.
    const accepted: string[] = [];
    let dead = false;
    const client = async () => {
      while (!dead) {
        const res = await fetch(hook, { method: "POST", body: '{"n":1}' }).catch(() => null);
        if (!res) continue; // the service died under this request: it was never answered
        if (res.status === 202)
          accepted.push(((await res.json()) as { event_id: string }).event_id);
      }
    };
    const clients = Array.from({ length: 8 }, client);
    const end = Date.now() + 60_000;
    while (accepted.length < 150 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    expect(runDirs().length).toBeGreaterThan(0); // the fork server's socket folder
    process.kill(-service!.pid!, "SIGKILL");
    await service;
    dead = true;
    await Promise.all(clients);
    const left = runDirs();
    expect(left.length).toBeGreaterThan(0); // nobody removed them: the process was killed

    url = await start(port, python);
    for (const name of left) expect(existsSync(join(tmp, name))).toBe(false);
    expect(accepted.length).toBeGreaterThanOrEqual(150);
    const missing: string[] = [];
    for (const id of accepted) {
      const res = await fetch(`${url}/api/v1/events/${id}`);
      if (res.status !== 200) missing.push(`${id}: ${res.status}`);
    }
    expect(missing).toEqual([]);
    console.log(`accepted ${accepted.length} events before the kill; all there after restart`);
  }, 120_000);
});
