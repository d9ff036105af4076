// SIGTERM, as a platform sends it: readiness false at once, held sync requests and the
// non-durable sessions running here finish within the drain period (a sync one at work after its
// answer too), durable sessions resume at the next start, non-durable ones still running when the
// period ends are interrupted, every Python process is reaped, exit 0; a second signal exits at
// once. Both entry points, as processes.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { defaultStorageUrl } from "../src/storage-url.ts";
import { deployFolder, freePort, untilStopping, waitHealthy } from "./support/process.ts";
import { pgrep } from "./support/processes.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "drain");
const TOKEN = "drain-token";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function procState(pid: number): string {
  try {
    return (
      readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.slice(0, 1) +
      " " +
      readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 80)
    );
  } catch {
    return "gone";
  }
}

/** Every process below `pid` (fork servers, their session processes and spares). */
function descendants(pid: number): number[] {
  const children = pgrep("-P", String(pid));
  return children.flatMap((c) => [c, ...descendants(c)]);
}

describe("stopping on SIGTERM", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-drain-"));
  const work = mkdtempSync(join(tmpdir(), "hookline-drain-work-"));
  const running: ResultPromise[] = [];
  afterAll(async () => {
    for (const p of running) p.kill("SIGKILL");
    await Promise.all(running.map((p) => p.catch(() => {})));
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  async function start(entry: "container" | "up", port: number, drain = "120") {
    const env = {
      XDG_DATA_HOME: join(home, "data"),
      XDG_CONFIG_HOME: join(home, "config"),
      SVC_WORKER_PYTHON: await testPython(),
      SVC_HOST: "127.0.0.1",
      SVC_PORT: String(port),
      SVC_API_TOKEN: TOKEN,
      // Long enough never to cut what a test holds on a slow machine: a drain ends when the held
      // requests are answered and the non-durable sessions have ended, and the tests release
      // theirs (one test gives less, to see a session outlast it).
      SVC_DRAIN: drain,
    };
    const args =
      entry === "container"
        ? [join(repoRoot, "bin/container.mjs")]
        : [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "prod", "--port", String(port)];
    // The service must exit by itself: no SIGKILL from execa 5 s after our SIGTERM (its default).
    const child = execa("node", args, { env, reject: false, forceKillAfterDelay: false });
    running.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 30_000);
    return { child, url };
  }

  async function api<T>(url: string, path: string, init: RequestInit = {}): Promise<T> {
    const res = await fetch(`${url}/api/v1${path}`, { ...init, headers: auth });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  async function deploy(url: string) {
    expect((await deployFolder(url, FIXTURE, auth)).status).toBe(200);
    await api(url, "/envs/drain/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
      url,
      "/triggers",
    );
    return Object.fromEntries(triggers.map((t) => [t.name, url + t.webhook_path]));
  }

  const post = (url: string, body = "{}") => fetch(url, { method: "POST", body });
  /** A slow_sync request, held until `release()` writes the file it waits for. */
  const holdSync = (url: string, name: string) => ({
    answer: post(url, name),
    release: () => writeFileSync(join(work, name), ""),
  });

  it("container: drains held requests, leaves durable sessions, interrupts the rest, exits 0", async () => {
    const port = await freePort();
    // `long` sleeps 60 s: the drain gives it 10 s (the held request is answered well before).
    const { child, url } = await start("container", port, "10");
    const urls = await deploy(url);
    const durable = (await (await post(urls.durable!)).json()) as { session_id: string };
    const long = (await (await post(urls.long!)).json()) as { session_id: string };
    await until("the durable session to run", () => existsSync(join(work, "durable-started")));
    await until("the long session to print", async () => {
      const { prints } = await api<{ prints: { text: string }[] }>(
        url,
        `/sessions/${long.session_id}/prints`,
      );
      return prints.some((p) => p.text.includes("long started"));
    });
    const held = holdSync(urls.slow_sync!, "release-container");
    await until("the sync session to start", async () => {
      const { sessions } = await api<{ sessions: { trigger_name: string }[] }>(url, "/sessions");
      return sessions.some((s) => s.trigger_name === "slow_sync");
    });
    const python = descendants(child.pid!);
    expect(python.length).toBeGreaterThan(0);

    child.kill("SIGTERM");
    // Readiness goes false (the drain's refusal) while the request is held; new webhooks are
    // refused with a Retry-After.
    await untilStopping(url);
    const refused = await post(urls.long!);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    // The held request is answered by its handler, not cut.
    held.release();
    const answer = await held.answer;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("finished");
    const done = await child;
    expect(done.exitCode).toBe(0);
    // Gone: killed by their fork server as it exits. One it killed but had no time to reap before
    // the service killed it (a starved machine) is reaped by init a moment later.
    await until("the Python processes to go", () => python.every((pid) => !alive(pid))).catch(
      (e: Error) => {
        const left = python.filter(alive).map((pid) => `${pid}: ${procState(pid)}`);
        throw new Error(`${e.message}: ${left.join(", ")}`);
      },
    );

    // The next start resumes the durable session; the other one was interrupted.
    const again = await start("container", port);
    writeFileSync(join(work, "go"), "");
    let last: unknown;
    await until("the durable session to complete", async () => {
      const { session } = await api<{ session: { state: string } }>(
        again.url,
        `/sessions/${durable.session_id}`,
      );
      last = { session, log: await api(again.url, `/sessions/${durable.session_id}/log`) };
      return session.state === "completed";
    }).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(last)}`);
    });
    const { session } = await api<{ session: { state: string; error?: { message: string } } }>(
      again.url,
      `/sessions/${long.session_id}`,
    );
    expect(session.state).toBe("error");
    expect(session.error?.message).toMatch(/interrupted/);
    again.child.kill("SIGTERM");
    expect((await again.child).exitCode).toBe(0);
  }, 600_000);

  it("container: a sync session at work after its answer ends completed within the drain", async () => {
    const { child, url } = await start("container", await freePort());
    const urls = await deploy(url);
    const answer = await post(urls.answer_then_print!);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("answered");
    const { sessions } = await api<{ sessions: { id: string; trigger_name: string }[] }>(
      url,
      "/sessions",
    );
    const id = sessions.find((s) => s.trigger_name === "answer_then_print")!.id;
    // Right after the answer, while the handler sleeps its second before printing.
    const stopped = Date.now();
    child.kill("SIGTERM");
    expect((await child).exitCode).toBe(0);
    const stores = createStores(
      createStorageFromUrl(defaultStorageUrl(join(home, "data/hookline"))),
    );
    try {
      const record = await stores.sessions.get(id);
      const prints = (await stores.logs.get(id)).flatMap((e) =>
        e.kind === "print" ? e.text.trim() : [],
      );
      expect({ state: record?.state, error: record?.error?.message, prints }).toEqual({
        state: "completed",
        error: undefined,
        prints: ["printed after the answer"],
      });
    } finally {
      await stores.dispose();
    }
    // The drain ended with the session, not at its 120 s.
    expect(Date.now() - stopped).toBeLessThan(60_000);
  }, 300_000);

  it("container: a second signal exits at once, without waiting for the drain", async () => {
    const { child, url } = await start("container", await freePort());
    const urls = await deploy(url);
    const held = post(urls.hang_sync!).catch(() => null);
    const hung = await until("the sync session to start", async () => {
      const { sessions } = await api<{
        sessions: { id: string; trigger_name: string; state: string }[];
      }>(url, "/sessions");
      return sessions.find((s) => s.trigger_name === "hang_sync" && s.state === "running")?.id;
    });
    const python = descendants(child.pid!);
    child.kill("SIGTERM");
    await untilStopping(url);
    child.kill("SIGTERM");
    const done = await child;
    expect(done.exitCode).not.toBe(0);
    // At once, not after the drain: the drain's end (held requests given up, sessions ended
    // "interrupted") never came, so the held session is still stored as running.
    const stores = createStores(
      createStorageFromUrl(defaultStorageUrl(join(home, "data/hookline"))),
    );
    try {
      expect((await stores.sessions.get(hung))?.state, "the held session after exit").toBe(
        "running",
      );
    } finally {
      await stores.dispose();
    }
    await held;
    // Its fork servers die with it (their stdin closes); their children die with them.
    await until("its Python processes to go", () => python.every((pid) => !alive(pid)));
  }, 300_000);

  it("cli up: the same drain, exit 0; an open watch stream does not hold the stop", async () => {
    const { child, url } = await start("up", await freePort());
    const urls = await deploy(url);
    const held = holdSync(urls.slow_sync!, "release-up");
    await until("the sync session to start", async () => {
      const { sessions } = await api<{ sessions: { trigger_name: string }[] }>(url, "/sessions");
      return sessions.some((s) => s.trigger_name === "slow_sync");
    });
    // A client following a durable session that waits (the drain does not wait for it): its
    // stream stays open until the service closes the connections left after the drain.
    rmSync(join(work, "go"), { force: true });
    const durable = (await (await post(urls.durable!)).json()) as { session_id: string };
    const watch = await fetch(`${url}/api/v1/sessions/${durable.session_id}/watch`, {
      headers: auth,
    });
    expect(watch.status).toBe(200);
    const stream = watch.body!.getReader();
    await stream.read(); // its first event: the stream is open
    const python = descendants(child.pid!);
    child.kill("SIGTERM");
    await untilStopping(url);
    held.release();
    const answer = await held.answer;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("finished");
    // The drain ends once the held request is answered; the stream is then cut a second later.
    // Bounded, so that a stop held by the stream fails here rather than at the test's time-out.
    const exited = await Promise.race([child, new Promise((r) => setTimeout(r, 60_000, null))]);
    expect((exited as Awaited<typeof child> | null)?.exitCode, "the stop, 60 s after").toBe(0);
    await until("the Python processes to go", () => python.every((pid) => !alive(pid)));
  }, 300_000);
});
