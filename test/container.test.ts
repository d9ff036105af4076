import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";

/** The container's entry point (Dockerfile CMD), run as a plain process: no Docker here. */
describe("container entry point", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-container-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const env = async (extra: Record<string, string>) => ({
    SVC_HOST: "127.0.0.1",
    SVC_STORAGE: "memory:",
    SVC_WORKER_PYTHON: await testPython(),
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    ...extra,
  });

  it("refuses to start without SVC_API_TOKEN", async () => {
    const r = await execa("node", [join(repoRoot, "bin/container.mjs")], {
      env: await env({ SVC_PORT: String(await freePort()) }),
      reject: false,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe("error: SVC_API_TOKEN must be set: the management API needs a token");
  });

  it("refuses a storage URL it does not support, in one line", async () => {
    const r = await execa("node", [join(repoRoot, "bin/container.mjs")], {
      env: await env({ SVC_API_TOKEN: "t", SVC_STORAGE: "mysql://u@127.0.0.1/db" }),
      reject: false,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^error: SVC_STORAGE: unsupported storage "mysql:\/\/u@127\.0\.0\.1\/db"; supported: lmdb:<dir>/,
    );
    expect(r.stderr.split("\n")).toHaveLength(1);
  });

  it("serves webhooks and a token-protected API, and stops cleanly on SIGTERM", async () => {
    const p = await freePort();
    const child = execa("node", [join(repoRoot, "bin/container.mjs")], {
      env: await env({ SVC_PORT: String(p), SVC_API_TOKEN: "container-token" }),
      reject: false,
    });
    const url = `http://127.0.0.1:${p}`;
    await waitHealthy(url);
    expect((await fetch(`${url}/api/v1/projects`)).status).toBe(401);
    const auth = { authorization: "Bearer container-token", "content-type": "application/json" };
    expect((await deployFolder(url, join(repoRoot, "examples/sync-echo"), auth)).status).toBe(200);
    const { triggers } = (await (
      await fetch(`${url}/api/v1/triggers`, { headers: auth })
    ).json()) as {
      triggers: { webhook_path: string }[];
    };
    const res = await fetch(url + triggers[0]!.webhook_path, {
      method: "POST",
      body: JSON.stringify({ message: "hi" }),
    });
    expect(await res.json()).toEqual({ echo: "hi", length: 2 });
    child.kill("SIGTERM");
    const done = await child;
    expect(done.exitCode).toBe(0);
    expect(done.stdout).toContain(`hookline listening on ${url} (container)`);
  });
});
