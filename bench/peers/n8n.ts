import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, type RunningPeer, stopAll, until } from "./restate.ts";

const run = promisify(execFile);

/** The same work as our trivial sync handler: Webhook → Code (read the JSON body) → Respond. */
function workflow() {
  const node = (
    name: string,
    type: string,
    typeVersion: number,
    x: number,
    parameters: object,
  ) => ({
    id: `00000000-0000-4000-8000-00000000000${x}`,
    name,
    type,
    typeVersion,
    position: [x * 200, 0],
    parameters,
  });
  return {
    id: "hooklineBench01",
    name: "hookline bench",
    active: true,
    nodes: [
      {
        ...node("Webhook", "n8n-nodes-base.webhook", 2, 1, {
          httpMethod: "POST",
          path: "bench",
          responseMode: "responseNode",
          options: {},
        }),
        webhookId: "6f1c1a52-7d43-4f43-9a40-6a3f7c9f0b11",
      },
      node("Code", "n8n-nodes-base.code", 2, 2, {
        jsCode: "return [{ json: { ok: true, n: $json.body?.n ?? null } }];",
      }),
      node("Respond", "n8n-nodes-base.respondToWebhook", 1.1, 3, {
        respondWith: "firstIncomingItem",
        options: { responseCode: 201 },
      }),
    ],
    connections: {
      Webhook: { main: [[{ node: "Code", type: "main", index: 0 }]] },
      Code: { main: [[{ node: "Respond", type: "main", index: 0 }]] },
    },
    settings: { executionOrder: "v1" },
  };
}

/**
 * n8n as a user starts it (`n8n start`, SQLite in a fresh user folder, loopback), with the
 * workflow imported and published from its CLI first. `urls.sync` is its production webhook.
 * @example const n = await startN8n("/repo/bench/.peers/n8n"); await n.close();
 */
export async function startN8n(dir: string): Promise<RunningPeer> {
  const home = mkdtempSync(join(tmpdir(), "hookline-bench-n8n-"));
  const port = await freePort();
  const env = {
    ...process.env,
    N8N_USER_FOLDER: home,
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: "127.0.0.1",
    N8N_DIAGNOSTICS_ENABLED: "false",
    N8N_VERSION_NOTIFICATIONS_ENABLED: "false",
    N8N_TEMPLATES_ENABLED: "false",
    N8N_PERSONALIZATION_ENABLED: "false",
    N8N_SECURE_COOKIE: "false",
  };
  const bin = join(dir, "node_modules/.bin/n8n");
  const children: ChildProcess[] = [];
  const close = async () => {
    await stopAll(children);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const file = join(home, "workflow.json");
    writeFileSync(file, JSON.stringify([workflow()]));
    await run(bin, ["import:workflow", `--input=${file}`], { env, timeout: 180_000 });
    // n8n 2 publishes a workflow (1.x set it active); either makes its webhook live.
    await run(bin, ["publish:workflow", "--id=hooklineBench01"], { env, timeout: 180_000 }).catch(
      () => run(bin, ["update:workflow", "--id=hooklineBench01", "--active=true"], { env }),
    );
    const server = spawn(bin, ["start"], { env, stdio: ["ignore", "ignore", "pipe"] });
    children.push(server);
    let stderr = "";
    server.stderr?.on("data", (c: Buffer) => {
      stderr = (stderr + c.toString("utf8")).slice(-4000);
    });
    const url = `http://127.0.0.1:${port}/webhook/bench`;
    await until("n8n webhook", 180_000, async () => {
      if (server.exitCode !== null) throw new Error(`n8n exited: ${stderr}`);
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"n":1}',
      });
      return res.status === 201;
    });
    return { urls: { sync: url }, pids: [server.pid!], close };
  } catch (e) {
    await close();
    throw e;
  }
}
