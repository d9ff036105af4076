import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Fleet } from "./support/fleet.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoPostgres } from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { warnIfNoRedis } from "./support/redis.ts";
import { untilEach } from "./support/until.ts";

/**
 * Two instances on PostgreSQL with a Redis of their own as the bus, which is killed and started
 * again empty (no persistence) while webhooks arrive: Redis decides nothing about who owns a
 * session, so no webhook is refused and every accepted session runs to its end.
 */
const TOKEN = "redis-restart-token";
// The machine's Redis must be there (CI starts one): its redis-server is started here again.
const enabled =
  warnIfNoRedis("the Redis restart test") && warnIfNoPostgres("the Redis restart test");
afterAll(dropPostgresTestTables);

const MANIFEST = `version: v2
project:
  name: restarts
triggers:
  - name: work
    type: webhook
    call: handlers.py:work
`;
const HANDLERS = `import time


def work(event):
    time.sleep(0.2)
    print("done", event.data.body.text)
`;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A redis-server on `port` keeping nothing on disk, resolved once it answers. */
async function redisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    // Connecting, not binding, to look: a bind of the port here would take it from the server
    // for that moment, and a server starting then exits (address in use).
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("redis-server did not start");
}

describe.skipIf(!enabled)("a Redis restart without persistence under load", () => {
  let fleet: Fleet;
  let redis: ChildProcess;
  let port = 0;
  let hook = "";

  beforeAll(async () => {
    port = await freePort();
    redis = await redisServer(port);
    fleet = new Fleet({
      SVC_STORAGE: postgresTestUrl(),
      SVC_REDIS_URL: `redis://127.0.0.1:${port}`,
      SVC_SECRET_KEY: "00".repeat(32),
      SVC_API_TOKEN: TOKEN,
      SVC_WORKER_PYTHON: await testPython(),
      SVC_LEASE: "2",
    });
    await fleet.start(2);
    hook = (await fleet.deploySource(MANIFEST, { "handlers.py": HANDLERS }, TOKEN)).work!;
  }, 240_000);

  afterAll(async () => {
    await fleet?.dispose();
    redis?.kill("SIGKILL");
  }, 30_000);

  it("refuses no webhook and leaves no accepted session unrun", async () => {
    const statuses: number[] = [];
    const ids: string[] = [];
    const send = async (n: number) => {
      const res = await fetch(fleet.url + hook, { method: "POST", body: String(n) });
      statuses.push(res.status);
      if (res.status === 202) ids.push(((await res.json()) as { session_id: string }).session_id);
    };
    let n = 0;
    const burst = async (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        await send(n++);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await burst(2000);
    redis.kill("SIGKILL"); // gone, and everything in it
    await burst(2000);
    redis = await redisServer(port); // back, empty
    await burst(2000);

    expect(
      statuses.filter((s) => s !== 202),
      "refused webhooks",
    ).toEqual([]);
    const headers = { authorization: `Bearer ${TOKEN}` };
    await untilEach("every accepted session to complete", ids, async (id) => {
      const res = await fetch(`${fleet.url}/api/v1/sessions/${id}`, { headers });
      if (!res.ok) return false;
      const { session } = (await res.json()) as { session: { state: string } };
      return session.state === "completed";
    });
    expect(ids.length).toBe(n);
  }, 180_000);
});
