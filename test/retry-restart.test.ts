import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlakyApi, flakyApi } from "./support/flaky-api.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";
import { until } from "./support/until.ts";

/**
 * A durable retry outlives its service: the session waits between attempts (parked, its pending
 * attempt journaled with its deadline) when the service is killed (-9). Started again, the same
 * service resumes it; in a fleet, another instance takes it over. Either way the attempts on
 * record are not made again: the stand-in API counts exactly three calls.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "retry");
const RETRY_LIB = join(import.meta.dirname, "fixtures", "retry-lib");
const SECRET_KEY = "00".repeat(32);
// Instances sharing a store share the key that seals its secrets (the in-process one reads it here).
process.env.SVC_SECRET_KEY = SECRET_KEY;

/** `cli up` as its own process group, so one kill -9 reaches its Python processes too. */
function up(port: number, home: string, env: Record<string, string>): ResultPromise {
  return execa("node", [join(repoRoot, "bin/cli.mjs"), "up", "--port", String(port)], {
    env: {
      XDG_DATA_HOME: join(home, "data"),
      XDG_CONFIG_HOME: join(home, "config"),
      SVC_EVICT_AFTER: "0.5",
      SVC_SECRET_KEY: SECRET_KEY,
      ...env,
    },
    detached: true,
    reject: false,
  });
}

function kill(service: ResultPromise | null): void {
  try {
    if (service?.pid) process.kill(-service.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

async function api<T>(url: string, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${url}/api/v1${path}`, {
    ...init,
    headers: { "content-type": "application/json" },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Deploys the fixture at `url` with its vars set; returns the `patient` trigger's URL. */
async function deployed(url: string, standin: string): Promise<string> {
  expect((await deployFolder(url, FIXTURE)).status).toBe(200);
  for (const [name, value] of [
    ["STANDIN", standin],
    ["LIBDIR", RETRY_LIB],
  ]) {
    const body = JSON.stringify({ value });
    await api(url, `/envs/retry_rules/vars/${name}`, { method: "PUT", body });
  }
  const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
    url,
    "/triggers?project=retry_rules",
  );
  return url + triggers.find((t) => t.name === "patient")!.webhook_path;
}

/** Starts a `patient` session; resolves with its id once its first attempt failed on record. */
async function waitingToRetry(url: string, hook: string): Promise<string> {
  const res = await fetch(hook, { method: "POST" });
  const { session_id: id } = (await res.json()) as { session_id: string };
  await until("the first attempt journaled, pending", async () => {
    const log = await api<{ journal: { retry_at?: string }[] }>(url, `/sessions/${id}/log`);
    return log.journal[0]?.retry_at !== undefined;
  });
  return id;
}

/** The attempts the session logged after it was resumed: the ones on record are not made again. */
async function attemptsAfterResume(url: string, id: string): Promise<number[]> {
  type Entry = { kind: string; text?: string; retry?: { attempt: number } };
  const { entries } = await api<{ entries: Entry[] }>(url, `/sessions/${id}/log`);
  const resumed = entries.findIndex((e) => e.kind === "state" && e !== entries[0]);
  return entries.slice(resumed).flatMap((e) => (e.retry ? [e.retry.attempt] : []));
}

describe("a durable retry across a kill -9 of the service", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-retry-kill-"));
  let service: ResultPromise | null = null;
  let standin: FlakyApi;
  beforeAll(async () => {
    standin = await flakyApi();
  });
  afterAll(async () => {
    kill(service);
    await service?.catch(() => {});
    await standin?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("resumes after the restart and makes only the attempts left", async () => {
    const python = await testPython();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    service = up(port, home, { SVC_WORKER_PYTHON: python });
    await waitHealthy(url, 60_000);
    const id = await waitingToRetry(url, await deployed(url, standin.url));
    kill(service);
    await service;
    expect(standin.calls(id)).toBe(1);

    service = up(port, home, { SVC_WORKER_PYTHON: python });
    await waitHealthy(url, 60_000);
    const record = await until("the session's end", async () => {
      const { session } = await api<{ session: { state: string } }>(url, `/sessions/${id}`);
      return session.state === "running" ? null : session;
    });
    expect(record.state).toBe("completed");
    expect(standin.calls(id)).toBe(3);
    const { prints } = await api<{ prints: { text: string }[] }>(url, `/sessions/${id}/prints`);
    expect(prints.map((p) => p.text)).toEqual(["got 3"]);
    expect(await attemptsAfterResume(url, id)).toEqual([2, 3]);
  }, 120_000);
});

const enabled = warnIfNoFleet("the durable retry taken over by another instance");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);

describe.skipIf(!enabled)(
  "a durable retry on an instance that dies (PostgreSQL, Redis the bus)",
  () => {
    const home = mkdtempSync(join(tmpdir(), "hookline-retry-cluster-"));
    let other: ResultPromise | null = null;
    let taker: Awaited<ReturnType<typeof startQuietEmulator>> | null = null;
    let standin: FlakyApi;
    beforeAll(async () => {
      standin = await flakyApi();
    });
    afterAll(async () => {
      kill(other);
      await other?.catch(() => {});
      await taker?.emulator.close();
      if (taker) rmSync(taker.dataHome, { recursive: true, force: true });
      await standin?.close();
      rmSync(home, { recursive: true, force: true });
    });

    it("is taken over by another instance, which makes only the attempts left", async () => {
      const python = await testPython();
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const env = { SVC_WORKER_PYTHON: python, SVC_STORAGE: storage, SVC_LEASE: "1.5" };
      if (redisUrl) Object.assign(env, { SVC_REDIS_URL: redisUrl });
      other = up(port, home, env);
      await waitHealthy(url, 60_000);
      const id = await waitingToRetry(url, await deployed(url, standin.url));
      kill(other);
      await other;
      // Started only now, so the session cannot have run here from the start.
      const flags = { storage, redisUrl, leaseMs: 1500, evictAfterMs: 500 };
      taker = await startQuietEmulator(python, flags);
      const b = taker.emulator.url;
      const record = await until("the session's end", async () => {
        const { session } = await api<{ session: { state: string } }>(b, `/sessions/${id}`);
        return session.state === "running" ? null : session;
      });
      expect(record.state).toBe("completed");
      expect(standin.calls(id)).toBe(3);
      const log = await api<{ entries: { kind: string; text?: string }[] }>(
        b,
        `/sessions/${id}/log`,
      );
      expect(log.entries.filter((e) => e.kind === "print").map((e) => e.text)).toEqual(["got 3"]);
      expect(log.entries.some((e) => e.text === "owner stopped; resuming here")).toBe(true);
      expect(await attemptsAfterResume(b, id)).toEqual([2, 3]);
    }, 120_000);
  },
);
