import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A peer running on loopback: the URLs to load, and how to stop it. */
export interface RunningPeer {
  urls: Record<string, string>;
  pids: number[];
  close(): Promise<void>;
}

const endpointScript = fileURLToPath(new URL("./restate-endpoint.mjs", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP port free on loopback now (bound, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` every 100 ms until it returns true; throws with `what` past `ms`. */
export async function until(what: string, ms: number, check: () => Promise<boolean>) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not within ${ms / 1000} s`);
    await sleep(100);
  }
}

/** Stops children with SIGTERM, then SIGKILL after 5 s; resolves once each has exited. */
export async function stopAll(children: ChildProcess[]) {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
}

/**
 * restate-server (single node, fresh base dir, loopback ports) and our endpoint on its SDK,
 * registered through the admin API. `urls.call` is the plain call, `urls.step` the call with
 * one durable step (`ctx.run`), both through the ingress as a client calls them.
 * @example const r = await startRestate("/repo/bench/.peers/restate"); await r.close();
 */
export async function startRestate(dir: string): Promise<RunningPeer> {
  const base = mkdtempSync(join(tmpdir(), "hookline-bench-restate-"));
  const [ingress, admin, fabric, endpoint] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const children: ChildProcess[] = [];
  const close = async () => {
    await stopAll(children);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    const server = spawn(
      join(dir, "node_modules/.bin/restate-server"),
      ["--base-dir", base, "--no-logo", "--listen-mode", "tcp"],
      {
        stdio: ["ignore", "ignore", "pipe"],
        env: {
          ...process.env,
          RESTATE_NODE_NAME: "bench",
          RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
          RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabric}/`,
          RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
          RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
          RESTATE_DISABLE_TELEMETRY: "true",
          RESTATE_LOG_FILTER: "error",
        },
      },
    );
    children.push(server);
    let stderr = "";
    server.stderr?.on("data", (c: Buffer) => {
      stderr = (stderr + c.toString("utf8")).slice(-4000);
    });
    const sdk = join(dir, "node_modules/@restatedev/restate-sdk/dist/index.js");
    const ep = spawn(process.execPath, [endpointScript, sdk, String(endpoint)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(ep);
    const adminUrl = `http://127.0.0.1:${admin}`;
    await until("restate admin API", 60_000, async () => {
      if (server.exitCode !== null) throw new Error(`restate-server exited: ${stderr}`);
      return (await fetch(`${adminUrl}/health`)).ok;
    });
    await until("restate deployment registered", 30_000, async () => {
      const res = await fetch(`${adminUrl}/deployments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uri: `http://127.0.0.1:${endpoint}`, force: true }),
      });
      return res.ok;
    });
    const ingressUrl = `http://127.0.0.1:${ingress}`;
    await until("restate ingress", 30_000, async () => {
      const res = await fetch(`${ingressUrl}/bench/echo`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      return res.ok;
    });
    return {
      urls: { call: `${ingressUrl}/bench/echo`, step: `${ingressUrl}/bench/step` },
      pids: [server.pid!, ep.pid!],
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
