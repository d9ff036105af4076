// The image itself, as an operator runs it: built from the checkout's Dockerfile with podman, run
// on the default storage engine with a data volume, the README's example deployed over the API,
// a held sync request drained on SIGTERM, and a restart that keeps the data. CI must run it
// (.ci/run sets HOOKLINE_CONTAINER_TESTS=required); elsewhere it skips loudly without podman.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildImage,
  type Container,
  containerTestsRun,
  inspectImage,
  runContainer,
  runIn,
  waitReady,
} from "./support/podman.ts";
import { deployFolder, freePort, untilStopping } from "./support/process.ts";
import { repoRoot } from "./support/python.ts";
import { until } from "./support/until.ts";

const run = await containerTestsRun("container image");
const TOKEN = "image-token";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const MB = 1_000_000;

describe.runIf(run)("the container image", () => {
  const id = `hookline-test-${process.pid}`;
  const volume = `${id}-data`;
  // What the drain fixture's handler waits for: a file the test writes, seen through a mount.
  const work = mkdtempSync(join(tmpdir(), "hookline-image-work-"));
  chmodSync(work, 0o755);
  const containers: Container[] = [];

  beforeAll(async () => {
    const ms = await buildImage();
    console.log(`container image: built in ${(ms / 1000).toFixed(1)} s`);
    await execa("podman", ["volume", "create", volume]);
  }, 900_000);
  afterAll(async () => {
    for (const c of containers) await c.dispose();
    await execa("podman", ["volume", "rm", "-f", volume], { reject: false });
    rmSync(work, { recursive: true, force: true });
  });

  async function start(name: string) {
    const port = await freePort();
    const since = Date.now();
    const c = await runContainer({
      name: `${id}-${name}`,
      port,
      env: { SVC_API_TOKEN: TOKEN, SVC_DRAIN: "60" },
      volumes: [`${volume}:/data`, `${work}:/drain:ro`],
    });
    containers.push(c);
    const readyMs = await waitReady(c, since);
    console.log(`container image: ${name}: podman run to /readyz 200 in ${readyMs} ms`);
    return c;
  }

  const api = async <T>(c: Container, path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${c.url}/api/v1${path}`, { ...init, headers: auth });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const webhooks = async (c: Container) => {
    const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
      c,
      "/triggers",
    );
    return Object.fromEntries(triggers.map((t) => [t.name, c.url + t.webhook_path]));
  };
  const prints = async (c: Container, session: string) =>
    (await api<{ prints: { text: string }[] }>(c, `/sessions/${session}/prints`)).prints.map(
      (p) => p.text,
    );

  it("is small, runs as a non-root user, keeps its HEALTHCHECK, and holds no compiler", async () => {
    const image = await inspectImage();
    console.log(`container image: ${(image.size / MB).toFixed(0)} MB`);
    expect(image.size).toBeLessThanOrEqual(350 * MB);
    expect(image.user).toBe("node");
    expect(image.healthcheck?.join(" ")).toContain("/healthz");
    const facts = await runIn([
      "sh",
      "-c",
      "id -u; ls node_modules/@lmdb; ls -d node_modules/typescript node_modules/@typescript 2>/dev/null;" +
        " for t in gcc cc make g++ npm tsc; do command -v $t; done; true",
    ]);
    expect(facts.split("\n").filter(Boolean)).toEqual(["1000", "lmdb-linux-x64"]);
  }, 120_000);

  let sessionBefore = "";
  let hookBefore = "";

  it("serves the README's example with the token, drains a held sync request on SIGTERM", async () => {
    const c = await start("first");
    expect((await fetch(`${c.url}/healthz`)).status).toBe(200);
    expect(await c.healthcheck(), "the image's HEALTHCHECK").toBe(0);
    expect((await fetch(`${c.url}/api/v1/projects`)).status).toBe(401);
    expect((await deployFolder(c.url, join(repoRoot, "examples/hello"), auth)).status).toBe(200);
    hookBefore = (await webhooks(c)).hello!;
    const res = await fetch(hookBefore, { method: "POST", body: JSON.stringify({ name: "Ada" }) });
    expect(res.status).toBe(202);
    sessionBefore = ((await res.json()) as { session_id: string }).session_id;
    await until("the session's prints", async () =>
      (await prints(c, sessionBefore)).includes("Hello, Ada!"),
    );

    // The drain: a sync request held by its handler when SIGTERM comes is answered, then exit 0.
    const drainFixture = join(repoRoot, "test/fixtures/drain");
    expect((await deployFolder(c.url, drainFixture, auth)).status).toBe(200);
    await api(c, "/envs/drain/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: "/drain" }),
    });
    const answer = fetch((await webhooks(c)).slow_sync!, { method: "POST", body: "release" });
    await until("the sync session to run", async () => {
      const { sessions } = await api<{ sessions: { trigger_name: string; state: string }[] }>(
        c,
        "/sessions",
      );
      return sessions.some((s) => s.trigger_name === "slow_sync" && s.state === "running");
    });
    await c.signal("TERM");
    await untilStopping(c.url);
    writeFileSync(join(work, "release"), "");
    const held = await answer;
    expect(held.status).toBe(200);
    expect(await held.text()).toBe("finished");
    expect(await c.wait()).toBe(0);
  }, 300_000);

  it("starts again on the same data volume with its projects, sessions and webhook URLs", async () => {
    expect(sessionBefore, "runs after the test before").not.toBe("");
    const c = await start("again");
    const { projects } = await api<{ projects: { name: string }[] }>(c, "/projects");
    expect(projects.map((p) => p.name).sort()).toEqual(["drain", "hello"]);
    expect(await prints(c, sessionBefore)).toContain("Hello, Ada!");
    const hook = (await webhooks(c)).hello!;
    expect(new URL(hook).pathname).toBe(new URL(hookBefore).pathname);
    const res = await fetch(hook, { method: "POST", body: JSON.stringify({ name: "Grace" }) });
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    await until("the session's prints", async () =>
      (await prints(c, session_id)).includes("Hello, Grace!"),
    );
    // The data volume's package folder is on every session's path, also with no pre-install:
    // the image's .pth names it, and Python drops a folder that is missing when it starts.
    expect(
      (await deployFolder(c.url, join(repoRoot, "test/fixtures/data-path"), auth)).status,
    ).toBe(200);
    const where = await fetch((await webhooks(c)).path!, { method: "POST", body: "{}" });
    expect(((await where.json()) as { path: string[] }).path).toContain("/data/hookline/python");
    await c.signal("TERM");
    expect(await c.wait()).toBe(0);
  }, 300_000);
});
