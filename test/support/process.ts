import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { folderFiles } from "./emulator.ts";
import { until } from "./until.ts";

/** For tests that run the service as a separate process: a port, readiness, a deploy. */

/** A port nothing listens on right now (on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once `<url>/healthz` answers 200; throws after `ms` (room for a slow machine). */
export async function waitHealthy(url: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await fetch(`${url}/healthz`).catch(() => null))?.ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not become healthy within ${ms} ms`);
}

/**
 * Resolves once `<url>/readyz` answers the drain's refusal (503, "the service is stopping"): the
 * stop signal has been taken. A 503 of a service still preparing its Python environment (a
 * slow machine) is not it, and a webhook sent then would still be taken. A pooled keep-alive
 * connection the draining server has just closed fails once: it is asked again.
 * @example child.kill("SIGTERM"); await untilStopping(url);
 */
export async function untilStopping(url: string, ms = 60_000): Promise<void> {
  await until(
    `${url}/readyz to say the service is stopping`,
    async () => {
      const res = await fetch(`${url}/readyz`).catch(() => null);
      return res?.status === 503 && (await res.text()).includes("the service is stopping");
    },
    ms,
  );
}

/** Deploys a project folder through the API, as `cli deploy` would; returns the response. */
export function deployFolder(
  url: string,
  dir: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const files = folderFiles(dir);
  delete files["manifest.yaml"];
  const manifest = readFileSync(join(dir, "manifest.yaml"), "utf8");
  return fetch(`${url}/api/v1/deploy`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ manifest, files }),
  });
}
