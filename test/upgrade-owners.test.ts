import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresTarget } from "../src/storage/drivers/postgres.ts";
import { ownerTables } from "../src/storage/drivers/postgres-owners.ts";
import { Fleet } from "./support/fleet.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoPostgres } from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { type SessionTrace, traceOf } from "./support/scale.ts";
import { until, untilEach } from "./support/until.ts";

/**
 * A PostgreSQL store as the release before owner rows left it (its key table alone: records,
 * index, journals; no owner, instance or once tables) with a parked durable session, one
 * running and two queued behind it, upgraded in place at the first start of this one: every
 * live session gets its owner row and is taken up as the contract says.
 */
const TOKEN = "upgrade-token";
const enabled = warnIfNoPostgres("the owner-rows upgrade test");
afterAll(dropPostgresTestTables);

const MANIFEST = `version: v2
project:
  name: upgrading
triggers:
  - name: waiter
    type: webhook
    call: handlers.py:waiter
    is_durable: true
  - name: wake
    type: webhook
  - name: slow
    type: webhook
    call: handlers.py:slow
  - name: quick
    type: webhook
    call: handlers.py:quick
`;
const HANDLERS = `import time

import workflow_sdk


def waiter(event):
    key = event.data.body.text
    sub = workflow_sdk.subscribe("wake", f'data.body.text == "{key}"')
    workflow_sdk.next_event(sub)
    print(f"woke {key}")


def slow(event):
    print("slow started")
    time.sleep(60)


def quick(event):
    print("quick", event.data.body.text)
`;

describe.skipIf(!enabled)("a PostgreSQL store from before owner rows", () => {
  const storage = enabled ? postgresTestUrl() : "";
  let fleet: Fleet;
  let hooks: Record<string, string> = {};

  beforeAll(async () => {
    fleet = new Fleet({
      SVC_STORAGE: storage,
      SVC_SECRET_KEY: "00".repeat(32),
      SVC_API_TOKEN: TOKEN,
      SVC_WORKER_PYTHON: await testPython(),
      SVC_MAX_SESSIONS: "1",
      SVC_EVICT_AFTER: "1",
    });
    await fleet.start(1);
    hooks = await fleet.deploySource(MANIFEST, { "handlers.py": HANDLERS }, TOKEN);
  }, 240_000);

  afterAll(async () => {
    await fleet?.dispose();
  }, 30_000);

  const post = async (trigger: string, body = "") => {
    const res = await fetch(fleet.url + hooks[trigger], { method: "POST", body });
    expect(res.status).toBe(202);
    return ((await res.json()) as { session_id: string }).session_id;
  };
  const trace = (id: string) => traceOf(fleet.url, id, TOKEN);
  const prints = (t: SessionTrace) =>
    t.entries.filter((e) => e.kind === "print").map((e) => (e.text ?? "").trim());

  it("gives each live session an owner row at the first start, and takes each up once", async () => {
    const waiter = await post("waiter", "k1");
    await until("the waiter to park", async () => {
      return (await fleet.parked(TOKEN)) === 1 || undefined;
    });
    const slow = await post("slow");
    await until(
      "the slow one to run",
      async () => prints(await trace(slow)).length > 0 || undefined,
    );
    const queued = [await post("quick", "q1"), await post("quick", "q2")];
    expect((await trace(queued[1]!)).session.state).toBe("created");
    fleet.kill(0);

    // What the release before left: the key table only.
    const target = postgresTarget(storage)!;
    const t = ownerTables(target.table);
    const db = new pg.Client({ connectionString: target.url });
    await db.connect();
    try {
      await db.query(`DROP TABLE ${t.owners}, ${t.instances}, ${t.once}`);
      await db.query(`DELETE FROM ${target.table} WHERE key = 'meta:owners'`);

      await fleet.restart(0);
      const owners = await db.query(`SELECT count(*)::int AS n FROM ${t.owners}`);
      expect(owners.rows[0].n, "owner rows made at the upgrade").toBeGreaterThanOrEqual(1);
      await untilEach("the queued and the running to end", [slow, ...queued], async (id) => {
        const s = (await trace(id)).session.state;
        return s !== "created" && s !== "running";
      });
      expect((await trace(slow)).session).toMatchObject({ state: "error" });
      expect((await trace(slow)).session.error?.message).toMatch(/^interrupted/);
      for (const [n, id] of queued.entries()) {
        const q = await trace(id);
        expect(q.session.state, id).toBe("completed");
        expect(prints(q), `${id} ran once`).toEqual([`quick q${n + 1}`]);
      }
      // The parked one resumed, waiting again: the event wakes it.
      await post("wake", "k1");
      await until("the waiter to wake", async () => {
        const w = await trace(waiter);
        return w.session.state === "completed" ? w : undefined;
      });
      expect(prints(await trace(waiter))).toEqual(["woke k1"]);
      const left = await db.query(`SELECT count(*)::int AS n FROM ${t.owners}`);
      expect(left.rows[0].n, "every owner row gone with its session").toBe(0);
      const mark = await db.query(`SELECT value FROM ${target.table} WHERE key = 'meta:owners'`);
      expect(mark.rowCount).toBe(1);
    } finally {
      await db.end();
    }
  }, 180_000);
});
