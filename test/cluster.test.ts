import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type EmulatorHandle, useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

/**
 * Several instances on one PostgreSQL, Redis the bus: state, events, cache invalidation and stop
 * requests cross instances, and the sessions of an instance that dies are taken over by another.
 */
const FIXTURES = join(import.meta.dirname, "fixtures");
// Instances sharing a store share the key that seals its secrets.
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the multi-instance suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);

const post = (url: string, body = "") => fetch(url, { method: "POST", body });
const sessionOf = async (res: Response) =>
  ((await res.json()) as { session_id: string }).session_id;

/** Resolves once the newest session of `trigger` running on `emu` has subscribed. */
async function subscribed(emu: EmulatorHandle, trigger: string): Promise<void> {
  await until(`a session of "${trigger}" to subscribe`, async () => {
    const { sessions } = await emu.api<{ sessions: { id: string; trigger_name: string }[] }>(
      "/sessions?project=cluster_rules&limit=20",
    );
    const newest = sessions.find((s) => s.trigger_name === trigger);
    if (!newest) return false;
    const { entries } = await emu.api<{ entries: { kind: string }[] }>(
      `/sessions/${newest.id}/log`,
    );
    return entries.some((e) => e.kind === "subscribe");
  });
}

describe.skipIf(!enabled)("instances sharing one PostgreSQL (Redis the bus)", () => {
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500 });
  const b = useEmulator({ storage, redisUrl, leaseMs: 1500 });
  let onA: Record<string, string>;
  const onB = (url: string) => url.replace(a.url, b.url);

  // Each test starts from the manifest's COLOR: a value set through the API would win over it
  // until deleted.
  beforeEach(async () => {
    await a.api("/envs/cluster_rules/vars/COLOR", { method: "DELETE", allowError: true });
    onA = await a.deploy(join(FIXTURES, "cluster"));
  });

  it("serves a project deployed on A from B", async () => {
    const id = await sessionOf(await post(onB(onA.hello!)));
    expect((await b.ended(id)).state).toBe("completed");
    expect(await a.prints(id)).toEqual(["red"]);
  });

  it("sees a var set on B in A's next session", async () => {
    // Warm A's cache first, so only an invalidation from B can refresh it.
    await a.ended(await sessionOf(await post(onA.hello!)));
    await b.api("/envs/cluster_rules/vars/COLOR", {
      method: "PUT",
      body: JSON.stringify({ value: "green" }),
    });
    // The invalidation crosses over pub/sub: A's sessions see it once it has arrived.
    let prints: string[] = [];
    await until("a session on A to print the var set on B", async () => {
      const id = await sessionOf(await post(onA.hello!));
      await a.ended(id);
      prints = await a.prints(id);
      return prints[0] === "green";
    });
    expect(prints).toEqual(["green"]);
  });

  it("starts A's next session with a var set on A, though A read the project a moment before", async () => {
    // A fleet keeps the project its sessions start with a few seconds: a change drops it.
    expect(await (await post(onA.color!)).text()).toBe("red");
    await a.api("/envs/cluster_rules/vars/COLOR", {
      method: "PUT",
      body: JSON.stringify({ value: "green" }),
    });
    expect(await (await post(onA.color!)).text()).toBe("green");
  });

  it("hands an event that reaches B to a session waiting on A", async () => {
    const held = post(onA.waiter!);
    // Not a fixed pause: a cold fork server on a busy machine takes longer than any guess.
    await subscribed(a, "waiter");
    expect((await post(onB(onA.source!), "from B")).status).toBe(202);
    const res = await held;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("from B");
  });

  it("stops, through B, a session running on A", async () => {
    const id = await sessionOf(await post(onA.sleeper!));
    await until("the session to run on A", async () => {
      const { session } = await b.api<{ session: { state: string } }>(`/sessions/${id}`);
      return session.state === "running";
    });
    const { session } = await b.api<{ session: { state: string } }>(`/sessions/${id}/stop`, {
      method: "POST",
    });
    expect(session.state).toBe("stopped");
  });
});

describe.skipIf(!enabled)("an instance that dies", () => {
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500 });
  const home = mkdtempSync(join(tmpdir(), "hookline-cluster-"));
  const work = mkdtempSync(join(tmpdir(), "hookline-cluster-work-"));
  let other: ResultPromise | null = null;
  afterAll(async () => {
    try {
      if (other?.pid) process.kill(-other.pid, "SIGKILL");
    } catch {
      // Already gone: the test killed it.
    }
    await other?.catch(() => {});
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it("has its durable session resumed by another instance", async () => {
    const port = await freePort();
    other = execa("node", [join(repoRoot, "bin/cli.mjs"), "up", "--port", String(port)], {
      env: {
        XDG_DATA_HOME: join(home, "data"),
        XDG_CONFIG_HOME: join(home, "config"),
        SVC_WORKER_PYTHON: await testPython(),
        SVC_STORAGE: storage,
        SVC_REDIS_URL: redisUrl ?? "",
        SVC_LEASE: "1.5",
        // Both instances must decrypt the same secrets.
        SVC_SECRET_KEY: "00".repeat(32),
      },
      detached: true,
      reject: false,
    });
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 60_000);
    expect((await deployFolder(url, join(FIXTURES, "durable"))).status).toBe(200);
    await a.api("/envs/durable_rules/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const { triggers } = await a.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=durable_rules",
    );
    const steps = triggers.find((t) => t.name === "steps")!.webhook_path;
    const id = await sessionOf(await post(url + steps));
    await until("the pid file", () => existsSync(join(work, "pid")));
    // The pid file is written inside `report_pid()`: kill once its step is in the shared journal.
    await until("report_pid() journaled", async () => {
      const { journal } = await a.api<{ journal: unknown[] }>(`/sessions/${id}/log`);
      return journal.length >= 2;
    });
    process.kill(-other.pid!, "SIGKILL");
    await other;
    writeFileSync(join(work, "go"), "");
    const record = await a.ended(id);
    expect(record.state).toBe("completed");
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("one\ntwo\n");
    expect(await a.prints(id)).toEqual(["first print", "done: ONE TWO"]);
  }, 300_000);
});
