import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

  /** The entry point run with `extra`, which it refuses at start: exit code 1. */
  const refusedAt = async (extra: Record<string, string>) => {
    const r = await execa("node", [join(repoRoot, "bin/container.mjs")], {
      env: await env(extra),
      reject: false,
    });
    expect(r.exitCode).toBe(1);
    return r;
  };

  it("refuses to start without SVC_API_TOKEN", async () => {
    const r = await refusedAt({ SVC_PORT: String(await freePort()) });
    expect(r.stderr).toBe("error: SVC_API_TOKEN must be set: the management API needs a token");
  });

  it("refuses a storage URL it does not support, in one line", async () => {
    const r = await refusedAt({ SVC_API_TOKEN: "t", SVC_STORAGE: "mysql://u@127.0.0.1/db" });
    expect(r.stderr).toMatch(
      /^error: SVC_STORAGE: unsupported storage "mysql:\/\/u@127\.0\.0\.1\/db"; supported: lmdb:<dir>/,
    );
    expect(r.stderr.split("\n")).toHaveLength(1);
  });

  it("refuses a bad bound of reused processes, in one line", async () => {
    const r = await refusedAt({ SVC_API_TOKEN: "t", SVC_REUSE_SESSIONS: "0" });
    expect(r.stderr).toBe(
      'error: SVC_REUSE_SESSIONS: expected a whole number of at least 1, got "0"',
    );
  });

  it("refuses a wrong token on the API and the UI; the right one opens both", async () => {
    const p = await freePort();
    const child = execa("node", [join(repoRoot, "bin/container.mjs")], {
      env: await env({ SVC_PORT: String(p), SVC_API_TOKEN: "the-container-token" }),
      reject: false,
    });
    try {
      const url = `http://127.0.0.1:${p}`;
      await waitHealthy(url);
      const projects = (authorization: string) =>
        fetch(`${url}/api/v1/projects`, { headers: { authorization } });
      // Well-formed bearer tokens that are not the token: a prefix, a longer one, another case.
      for (const wrong of ["the-container-toke", "the-container-token2", "THE-CONTAINER-TOKEN"]) {
        const res = await projects(`Bearer ${wrong}`);
        expect(res.status, `API with token "${wrong}"`).toBe(401);
        expect(((await res.json()) as { status: number }).status).toBe(401);
      }
      expect((await projects("Bearer the-container-token")).status).toBe(200);

      // The UI: signing in with a wrong token is refused and sets no cookie; a bearer header
      // (right or wrong) is no way in; the right token signs in and the cookie opens the pages.
      const signIn = (token: string) =>
        fetch(`${url}/ui/sign-in`, {
          method: "POST",
          redirect: "manual",
          headers: { origin: url, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token, next: "/ui/projects" }),
        });
      const refused = await signIn("the-container-toke");
      expect(refused.status, "UI sign-in with a wrong token").toBe(401);
      expect(refused.headers.get("set-cookie")).toBeNull();
      expect(await refused.text()).toContain("That is not the API token.");
      const page = (headers: Record<string, string>) =>
        fetch(`${url}/ui/projects`, { redirect: "manual", headers });
      for (const authorization of ["Bearer the-container-toke", "Bearer the-container-token"]) {
        const res = await page({ authorization });
        expect(res.status, `UI with ${authorization}`).toBe(303);
        expect(res.headers.get("location")).toMatch(/^\/ui\/sign-in\?next=/);
      }
      const signedIn = await signIn("the-container-token");
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get("location")).toBe("/ui/projects");
      const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
      const opened = await page({ cookie });
      expect(opened.status).toBe(200);
      expect(await opened.text()).toContain("<h1>Projects</h1>");
      const forged = `${cookie.slice(0, -2)}xx`;
      expect((await page({ cookie: forged })).status).toBe(303);
    } finally {
      child.kill("SIGTERM");
      await child;
    }
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

  it("runs sessions at the image's CPU priority: SCHED_IDLE, all their threads", async () => {
    const dockerfile = readFileSync(join(repoRoot, "Dockerfile"), "utf8");
    const priority = /^\s*SVC_SESSION_PRIORITY=(\w+)/m.exec(dockerfile)?.[1];
    expect(priority).toBe("idle");
    const p = await freePort();
    const child = execa("node", [join(repoRoot, "bin/container.mjs")], {
      env: await env({ SVC_PORT: String(p), SVC_API_TOKEN: "t", SVC_SESSION_PRIORITY: priority! }),
      reject: false,
    });
    try {
      const url = `http://127.0.0.1:${p}`;
      await waitHealthy(url);
      const auth = { authorization: "Bearer t", "content-type": "application/json" };
      const fixture = join(repoRoot, "test/fixtures/priority");
      expect((await deployFolder(url, fixture, auth)).status).toBe(200);
      const { triggers } = (await (
        await fetch(`${url}/api/v1/triggers?project=priority`, { headers: auth })
      ).json()) as { triggers: { webhook_path: string }[] };
      const res = await fetch(url + triggers[0]!.webhook_path, { method: "POST", body: "{}" });
      expect(await res.json()).toMatchObject({ policies: [5], many: true }); // 5: SCHED_IDLE
    } finally {
      child.kill("SIGTERM");
      await child;
    }
  });
});
