// A fleet as a platform runs it: two containers of the image on one PostgreSQL with Redis as the
// bus, behind Debian's nginx as the router. Webhooks reach either instance; the URLs the UI shows
// and an OAuth start's `redirect_uri` name the router's origin (X-Forwarded-Host, not the
// upstream's Host); a rolling replacement (start a new container, SIGTERM an old one) loses no
// accepted webhook (each session completes), answers no client a 5xx, answers every sync
// request the stopped one held, and the durable sessions running on it complete on another
// instance. CI must run it (.ci/run).
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Router, startRouter } from "./support/nginx.ts";
import {
  buildImage,
  type Container,
  containerTestsRun,
  runContainer,
  waitReady,
} from "./support/podman.ts";
import { DATABASE_URL, dropPostgresTestTables, postgresTestUrl } from "./support/postgres.ts";
import { deployFolder, freePort } from "./support/process.ts";
import { repoRoot } from "./support/python.ts";
import { REDIS_URL, redisTestPrefix } from "./support/redis.ts";
import { until } from "./support/until.ts";

const required = Boolean(process.env.CI) || process.env.HOOKLINE_CONTAINER_TESTS === "required";
let run = await containerTestsRun("container fleet");
if (run && (!DATABASE_URL || !REDIS_URL)) {
  const why = "DATABASE_URL and REDIS_URL must both be set";
  if (required) throw new Error(`the container fleet tests must run here, but ${why}`);
  console.warn(`\n*** SKIPPING the container fleet tests: ${why} ***\n`);
  run = false;
}
const TOKEN = "fleet-token";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
// Seconds a stopping instance gives the requests it holds; the router's read timeout is 60 s.
const DRAIN = "60";

describe.runIf(run)("a fleet of containers behind nginx", () => {
  const id = `hookline-fleet-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), "hookline-fleet-"));
  const work = join(dir, "work");
  const containers: Container[] = [];
  let router: Router;
  let ports: number[] = [];
  let env: Record<string, string> = {};

  async function start(name: string, port: number) {
    const since = Date.now();
    const c = await runContainer({
      name: `${id}-${name}`,
      port,
      env,
      volumes: [`${work}:/drain:ro`],
    });
    containers.push(c);
    await waitReady(c, since);
    return c;
  }

  beforeAll(async () => {
    writeFileSync(join(dir, ".keep"), "");
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work);
    chmodSync(work, 0o755);
    await buildImage();
    // Three slots: a, b now, c for the rolling replacement (refused until it runs: nginx tries
    // the next one).
    ports = [await freePort(), await freePort(), await freePort()];
    env = {
      SVC_API_TOKEN: TOKEN,
      SVC_STORAGE: postgresTestUrl(),
      SVC_REDIS_URL: `${REDIS_URL}?base=${redisTestPrefix()}`,
      SVC_SECRET_KEY: randomBytes(32).toString("hex"),
      SVC_DRAIN: DRAIN,
      // An OAuth app for gmail connections: only the start's redirect is checked, never used.
      GOOGLE_CLIENT_ID: "fleet-app",
      GOOGLE_CLIENT_SECRET: "fleet-s3cret",
    };
    await start("a", ports[0]!);
    await start("b", ports[1]!);
    router = await startRouter(join(dir, "nginx"), await freePort(), ports);
  }, 900_000);
  afterAll(async () => {
    await router?.dispose();
    for (const c of containers) await c.dispose();
    await dropPostgresTestTables();
    rmSync(dir, { recursive: true, force: true });
  });

  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${router.url}/api/v1${path}`, { ...init, headers: auth });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const webhookPaths = async () => {
    const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers",
    );
    return Object.fromEntries(triggers.map((t) => [t.name, t.webhook_path]));
  };
  /** Sessions alive on one instance, from its /metrics. */
  const liveOn = async (c: Container) => {
    const res = await fetch(`${c.url}/metrics`, { headers: auth });
    return Number(/^hookline_sessions_live (\d+)/m.exec(await res.text())?.[1] ?? 0);
  };
  const upstreamsOf = (pathPart: string) =>
    router
      .accessLog()
      .filter((l) => l.request.includes(pathPart))
      .map((l) => l.tried.at(-1) ?? "");

  it("takes webhooks on either instance, deployed once through the router", async () => {
    expect((await deployFolder(router.url, join(repoRoot, "examples/hello"), auth)).status).toBe(
      200,
    );
    const hello = (await webhookPaths()).hello!;
    const sessions: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(router.url + hello, {
        method: "POST",
        body: JSON.stringify({ name: `n${i}` }),
      });
      expect(res.status).toBe(202);
      sessions.push(((await res.json()) as { session_id: string }).session_id);
    }
    const used = new Set(upstreamsOf(hello));
    expect(used).toEqual(new Set(ports.slice(0, 2).map((p) => `127.0.0.1:${p}`)));
    for (const [i, s] of sessions.entries()) {
      await until(`session ${s}'s prints`, async () => {
        const { prints } = await api<{ prints: { text: string }[] }>(`/sessions/${s}/prints`);
        return prints.some((p) => p.text === `Hello, n${i}!`);
      });
    }
  }, 120_000);

  it("names the router's origin in the UI's webhook URLs, reached through either instance", async () => {
    const signIn = await fetch(`${router.url}/ui/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: router.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: TOKEN, next: "/ui/projects/hello" }),
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("location")).toBe("/ui/projects/hello");
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const hello = (await webhookPaths()).hello!;
    // Twice: round robin sends the two requests to the two instances.
    for (let i = 0; i < 2; i++) {
      const page = await fetch(`${router.url}/ui/projects/hello`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`${router.url}${hello}`);
      expect(html).not.toMatch(/http:\/\/hookline\/webhooks|0\.0\.0\.0/);
      for (const p of ports) expect(html).not.toContain(`127.0.0.1:${p}`);
    }
    // A page that needs a sign-in redirects within the router's origin (a relative Location).
    const refused = await fetch(`${router.url}/ui/projects`, { redirect: "manual" });
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toMatch(/^\/ui\/sign-in/);
  }, 60_000);

  it("starts OAuth with a redirect_uri on the router's origin, through either instance", async () => {
    const project = join(dir, "mailbox");
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, "manifest.yaml"),
      "version: v1\nproject:\n  name: mailbox\n  connections:\n" +
        "    - name: gmail_conn\n      integration: gmail\n  triggers:\n" +
        "    - name: read\n      type: webhook\n      call: program.py:on_read\n",
    );
    writeFileSync(join(project, "program.py"), "def on_read(event):\n    pass\n");
    expect((await deployFolder(router.url, project, auth)).status).toBe(200);
    const { connections } = await api<{ connections: { id: string }[] }>(
      "/connections?project=mailbox",
    );
    const start = `${router.url}/oauth/start/gmail?cid=${connections[0]!.id}`;
    // Until both instances have started one (round robin alternates per nginx worker, and a
    // request may meet another worker than the last): at most ten.
    for (let i = 0; i < 10 && new Set(upstreamsOf("/oauth/start/gmail")).size < 2; i++) {
      const res = await fetch(start, { headers: auth, redirect: "manual" });
      expect(res.status, await res.clone().text()).toBeGreaterThanOrEqual(300);
      const consent = new URL(res.headers.get("location")!);
      expect(consent.searchParams.get("redirect_uri")).toBe(`${router.url}/oauth/redirect/google`);
    }
    expect(new Set(upstreamsOf("/oauth/start/gmail")).size, "both instances started one").toBe(2);
  }, 60_000);

  it("replaces an instance (start new, SIGTERM old) losing no webhook and answering no 5xx", async () => {
    expect(
      (await deployFolder(router.url, join(repoRoot, "test/fixtures/drain"), auth)).status,
    ).toBe(200);
    await api("/envs/drain/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: "/drain" }),
    });
    const paths = await webhookPaths();
    const hello = paths.hello!;

    // Durable sessions waiting (in an activity) for a file written once the instance to stop
    // has gone. Asynchronous webhooks go to the shared queue: posted through the router until
    // the old instance runs two of them (its /metrics); those must complete on another one.
    const old = containers[0]!;
    const durable: string[] = [];
    let onOld = 0;
    while (onOld < 2) {
      expect(durable.length, "the old instance takes durable sessions").toBeLessThan(30);
      const res = await fetch(router.url + paths.durable_wait!, { method: "POST", body: "{}" });
      expect(res.status).toBe(202);
      durable.push(((await res.json()) as { session_id: string }).session_id);
      await until("the durable sessions to run", async () => {
        const { sessions } = await api<{ sessions: { id: string; state: string }[] }>(
          "/sessions?project=drain",
        );
        return durable.every((id) => sessions.some((s) => s.id === id && s.state === "running"));
      });
      onOld = await liveOn(old);
    }
    // The new instance first; then sync requests held by their handlers, spread by the router
    // over the three (two on the one to stop), held across the stop.
    const c = await start("c", ports[2]!);
    const held = Array.from({ length: 6 }, () =>
      fetch(router.url + paths.slow_sync!, { method: "POST", body: "release-fleet" }),
    );
    await until("the sync sessions to run", async () => {
      const { sessions } = await api<{ sessions: { trigger_name: string; state: string }[] }>(
        "/sessions?project=drain",
      );
      return (
        sessions.filter((s) => s.trigger_name === "slow_sync" && s.state === "running").length >= 6
      );
    });

    // Steady webhook traffic through the router while the old instance stops.
    const statuses: number[] = [];
    const accepted: string[] = [];
    let sending = true;
    const sender = async () => {
      while (sending) {
        const res = await fetch(router.url + hello, { method: "POST", body: "{}" }).catch(
          () => null,
        );
        statuses.push(res?.status ?? 0);
        if (res?.status === 202)
          accepted.push(((await res.json()) as { session_id: string }).session_id);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const senders = [sender(), sender()];
    await old.signal("TERM");
    await until("the old instance to stop being ready", async () => {
      const r = await fetch(`${old.url}/readyz`).catch(() => null);
      return r === null || r.status === 503;
    });
    // The handlers keep the requests 5 s past the stop: longer than a drain cut short would last.
    await new Promise((r) => setTimeout(r, 5000));
    writeFileSync(join(work, "release-fleet"), "");
    const answers = await Promise.all(held);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const a of answers) expect(await a.text()).toBe("finished");
    expect(await old.wait()).toBe(0);
    // Gone: what its durable sessions wait for comes, and another instance carries them on.
    writeFileSync(join(work, "go"), "");
    let resumed = 0;
    for (const id of durable) {
      await until(`durable session ${id} to complete`, async () => {
        const { session } = await api<{ session: { state: string } }>(`/sessions/${id}`);
        return session.state === "completed";
      });
      const { prints } = await api<{ prints: { text: string }[] }>(`/sessions/${id}/prints`);
      expect(prints.map((p) => p.text)).toEqual(["durable done"]);
      const log = JSON.stringify(await api(`/sessions/${id}/log`));
      if (log.includes("owner stopped; resuming here")) resumed++;
    }
    console.log(
      `fleet: ${durable.length} durable sessions completed, ${resumed} resumed elsewhere`,
    );
    expect(resumed, "the old instance's durable sessions, resumed elsewhere").toBe(onOld);
    // Each held request ran once: none was cut by the stopping instance and run again elsewhere
    // by the router (a drain shorter than the router's timeout does that: a 7th session, one
    // in error). Each ends completed: the stopping instance waited for the ones it ran, also
    // for a request another instance held.
    const slow = await until("the held requests' sessions to end", async () => {
      const { sessions } = await api<{ sessions: { trigger_name: string; state: string }[] }>(
        "/sessions?project=drain",
      );
      const states = sessions.filter((s) => s.trigger_name === "slow_sync").map((s) => s.state);
      return states.every((s) => s !== "created" && s !== "running") && states;
    });
    console.log(`fleet: the held requests' sessions: ${JSON.stringify(slow)}`);
    expect(slow).toEqual(Array(6).fill("completed"));
    await new Promise((r) => setTimeout(r, 1000));
    sending = false;
    await Promise.all(senders);

    const bad = statuses.filter((s) => s !== 202);
    console.log(
      `fleet: rolling replacement: ${statuses.length} webhooks sent, ${accepted.length} accepted, ` +
        `${bad.length} not (${JSON.stringify(bad)})`,
    );
    expect(bad).toEqual([]);
    expect(router.accessLog().filter((l) => l.status >= 500)).toEqual([]);
    const heldOn = upstreamsOf(paths.slow_sync!).join(" ");
    expect(heldOn, "a held request was on the stopped instance").toContain(`:${ports[0]}`);
    // Every accepted webhook has its session on record, and each completes: the stopping
    // instance ran the ones it had started to their end (its drain waits for them) and left the
    // ones it had not started to the others.
    const states: Record<string, number> = {};
    for (const s of accepted) {
      const state = await until(`session ${s} to end`, async () => {
        const { session } = await api<{ session: { state: string } }>(`/sessions/${s}`);
        return ["completed", "error", "stopped"].includes(session.state) && session.state;
      });
      states[state] = (states[state] ?? 0) + 1;
    }
    console.log(`fleet: accepted sessions by state: ${JSON.stringify(states)}`);
    expect(states).toEqual({ completed: accepted.length });
    // The new instance takes traffic.
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
  }, 300_000);
});
