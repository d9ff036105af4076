import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoPostgres } from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";
import { redisTestUrl, warnIfNoRedis } from "./support/redis.ts";
import { until } from "./support/until.ts";

/**
 * PostgreSQL holds the state, Redis carries the bus and the leases (`SVC_REDIS_URL`): two
 * instances serve one project. Without Redis, a second instance on the same table is refused.
 */
const FIXTURES = join(import.meta.dirname, "fixtures");
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled =
  warnIfNoPostgres("the PostgreSQL + Redis cluster suite") &&
  warnIfNoRedis("the PostgreSQL + Redis cluster suite");
const storage = enabled ? postgresTestUrl() : "memory:";
const redisUrl = enabled ? redisTestUrl() : undefined;
afterAll(dropPostgresTestTables);

const post = (url: string, body = "") => fetch(url, { method: "POST", body });
const sessionOf = async (res: Response) =>
  ((await res.json()) as { session_id: string }).session_id;

describe.skipIf(!enabled)("instances on PostgreSQL + Redis", () => {
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500 });
  const b = useEmulator({ storage, redisUrl, leaseMs: 1500 });

  it("serves on B a project deployed on A, with a var set on B seen by A", async () => {
    const onA = await a.deploy(join(FIXTURES, "cluster"));
    const onB = (url: string) => url.replace(a.url, b.url);
    const first = await sessionOf(await post(onB(onA.hello!)));
    expect((await b.ended(first)).state).toBe("completed");
    // B writes the record behind its end event: once A reads it completed from PostgreSQL,
    // the log written before it is there too.
    await until("A to read the session completed", async () => {
      const { session } = await a.api<{ session: { state: string } }>(`/sessions/${first}`);
      return session.state === "completed";
    });
    expect(await a.prints(first)).toEqual(["red"]);

    await a.ended(await sessionOf(await post(onA.hello!))); // A caches the webhook
    await b.api("/envs/cluster_rules/vars/COLOR", {
      method: "PUT",
      body: JSON.stringify({ value: "green" }),
    });
    let prints: string[] = [];
    await until("a session on A to print the var set on B", async () => {
      const id = await sessionOf(await post(onA.hello!));
      await a.ended(id);
      prints = await a.prints(id);
      return prints[0] === "green";
    });
    expect(prints).toEqual(["green"]);
  });

  it("hands an event that reaches B to a session waiting on A", async () => {
    const onA = await a.deploy(join(FIXTURES, "cluster"));
    const held = post(onA.waiter!);
    // Wait until the waiter has subscribed, as its log shows (from either instance).
    await until("the waiter to subscribe", async () => {
      const { sessions } = await b.api<{ sessions: { id: string; trigger_name: string }[] }>(
        "/sessions?project=cluster_rules&limit=20",
      );
      const waiter = sessions.find((s) => s.trigger_name === "waiter");
      const log = waiter
        ? await b.api<{ entries: { kind: string }[] }>(`/sessions/${waiter.id}/log`)
        : { entries: [] };
      return log.entries.some((e) => e.kind === "subscribe");
    });
    expect((await post(onA.source!.replace(a.url, b.url), "via B")).status).toBe(202);
    const res = await held;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("via B");
  });

  it("refuses, in one line, an instance without Redis next to them", async () => {
    await expect(startQuietEmulator(await testPython(), { storage })).rejects.toThrow(
      /^SVC_STORAGE: an instance without SVC_REDIS_URL|^SVC_STORAGE: another instance/,
    );
  });
});

describe.skipIf(!warnIfNoPostgres("the lone PostgreSQL instance test"))(
  "one instance on PostgreSQL without Redis",
  () => {
    it("runs alone, and a second one on the same table is refused", async () => {
      const table = postgresTestUrl();
      const python = await testPython();
      const { emulator, dataHome } = await startQuietEmulator(python, { storage: table });
      try {
        // Ready once its Python is prepared (nothing is deployed on its fresh table).
        await until(
          "the lone instance to be ready",
          async () => (await fetch(`${emulator.url}/readyz`)).status === 200,
        );
        await expect(startQuietEmulator(python, { storage: table })).rejects.toThrow(
          /^SVC_STORAGE: another instance is using PostgreSQL table hookline_t_\w+; to run several, set the same SVC_REDIS_URL/,
        );
      } finally {
        await emulator.close();
        rmSync(dataHome, { recursive: true, force: true });
      }
      // Its lock went with it: the next lone instance starts.
      const again = await startQuietEmulator(python, { storage: table });
      await again.emulator.close();
      rmSync(again.dataHome, { recursive: true, force: true });
    }, 300_000);
  },
);
