import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Fleet } from "./support/fleet.ts";
import {
  DATABASE_URL,
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { redisTestUrl, warnIfNoRedis } from "./support/redis.ts";
import { type SessionTrace, traceOf } from "./support/scale.ts";
import { tcpProxy } from "./support/tcp-proxy.ts";
import { until, untilEach } from "./support/until.ts";

/**
 * Two instances on one PostgreSQL with Redis as their bus; instance 0 reaches Redis and
 * PostgreSQL through proxies of its own that the test cuts, as a network partition would.
 * Cut from Redis only, it goes on: nothing is adopted, every session's prints are whole, and it
 * still accepts webhooks. Cut from PostgreSQL, the other instance adopts its sessions, and
 * nothing it writes once the cut mends lands.
 */
const TOKEN = "partition-token";
const enabled = warnIfNoRedis("the partition test") && warnIfNoPostgres("the partition test");
const STEPS = 12;
afterAll(dropPostgresTestTables);

const MANIFEST = `version: v2
project:
  name: partition
triggers:
  - name: steps
    type: webhook
    call: handlers.py:steps
    is_durable: true
  - name: waiter
    type: webhook
    call: handlers.py:waiter
    is_durable: true
  - name: wake
    type: webhook
`;
const HANDLERS = `import time

import workflow_sdk


@workflow_sdk.activity
def step(i):
    time.sleep(1)
    return i


def steps(event):
    key = event.data.body.text
    for i in range(${STEPS}):
        step(i)
        print(f"{key} step {i}")
    print(f"{key} done")


def waiter(event):
    key = event.data.body.text
    sub = workflow_sdk.subscribe("wake", f'data.body.text == "{key}"')
    workflow_sdk.next_event(sub)
    print(f"woke {key}")
`;

const prints = (t: SessionTrace) =>
  t.entries.filter((e) => e.kind === "print").map((e) => (e.text ?? "").trim());

describe.skipIf(!enabled)("a partition between one instance and Redis, then PostgreSQL", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-partition-"));
  const logs = process.env.HOOKLINE_FLEET_LOGS ?? home;
  let fleet: Fleet;
  let hooks: Record<string, string> = {};
  let redisCut: Awaited<ReturnType<typeof tcpProxy>>;
  let pgCut: Awaited<ReturnType<typeof tcpProxy>>;

  beforeAll(async () => {
    const storage = postgresTestUrl();
    const bus = redisTestUrl(); // one base for both instances
    const redis = new URL(bus);
    const db = new URL(DATABASE_URL!);
    redisCut = await tcpProxy(redis.hostname, Number(redis.port || 6379));
    pgCut = await tcpProxy(db.hostname, Number(db.port || 5432));
    process.env.HOOKLINE_FLEET_LOGS = logs;
    fleet = new Fleet(
      {
        SVC_STORAGE: storage,
        SVC_REDIS_URL: bus,
        SVC_SECRET_KEY: "00".repeat(32),
        SVC_API_TOKEN: TOKEN,
        SVC_WORKER_PYTHON: await testPython(),
        SVC_LEASE: "2",
      },
      (i): Record<string, string> =>
        i === 0 ? { SVC_STORAGE: pgCut.url(storage), SVC_REDIS_URL: redisCut.url(bus) } : {},
    );
    await fleet.start(2);
    hooks = await fleet.deploySource(MANIFEST, { "handlers.py": HANDLERS }, TOKEN);
  }, 240_000);

  afterAll(async () => {
    await fleet?.dispose();
    await redisCut?.close();
    await pgCut?.close();
    if (!process.env.HOOKLINE_FLEET_LOGS || logs === home) delete process.env.HOOKLINE_FLEET_LOGS;
    rmSync(home, { recursive: true, force: true });
  }, 30_000);

  /** Posts `key` to instance `i` itself (not the router): its session id, or the status. */
  async function post(i: number, key: string, trigger = "steps"): Promise<string | number> {
    const res = await fetch(fleet.instances[i]!.url + hooks[trigger], {
      method: "POST",
      body: key,
    });
    if (res.status !== 202) return res.status;
    return ((await res.json()) as { session_id: string }).session_id;
  }

  /** Every session's trace once all have ended, read through instance `via`. */
  async function ended(ids: string[], via: number): Promise<Map<string, SessionTrace>> {
    const out = new Map<string, SessionTrace>();
    await untilEach("every session to end", ids, async (id) => {
      const t = await traceOf(fleet.instances[via]!.url, id, TOKEN).catch(() => null);
      if (!t || t.session.state === "created" || t.session.state === "running") return false;
      out.set(id, t);
      return true;
    });
    return out;
  }

  it("cut from Redis: nothing adopted, every print whole, webhooks still accepted", async () => {
    // A session waiting on instance 1 for an event that reaches instance 0 during the cut: it
    // gets there once the bus is back (instance 0 keeps sending it meanwhile).
    fleet.freeze(0); // for less than a lease: instance 1 takes the waiter
    let waiter = "";
    try {
      waiter = (await post(1, "w1", "waiter")) as string;
      await until("the waiter to subscribe on instance 1", async () => {
        const t = await traceOf(fleet.instances[1]!.url, waiter, TOKEN);
        return t.journal.some((step) => step.kind === "subscribe") || undefined;
      });
    } finally {
      fleet.wake(0);
    }
    const before: string[] = [];
    for (let i = 0; i < 8; i++) before.push((await post(0, `a${i}`)) as string);
    await until("the sessions to run", async () => {
      const t = await traceOf(fleet.instances[1]!.url, before[7]!, TOKEN);
      return t.session.state === "running" || undefined;
    });
    redisCut.cut();
    const wake = await post(0, "w1", "wake"); // a call-less trigger: 202 and no session
    expect(typeof wake, "the wake, sent to the cut instance, is accepted").not.toBe("number");
    const during: (string | number)[] = [];
    for (let i = 0; i < 8; i++) {
      during.push(await post(0, `b${i}`));
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 16_000));
    redisCut.mend();
    expect(
      during.filter((d) => typeof d === "number"),
      "webhooks refused during the cut",
    ).toEqual([]);
    const woke = await ended([waiter], 1);
    expect(prints(woke.get(waiter)!), "the event reached the waiter once the bus was back").toEqual(
      ["woke w1"],
    );

    const keys = [...before.map((_, i) => `a${i}`), ...during.map((_, i) => `b${i}`)];
    const traces = await ended([...before, ...(during as string[])], 1);
    [...before, ...(during as string[])].forEach((id, n) => {
      const t = traces.get(id)!;
      const key = keys[n]!;
      expect(t.session.state, `${id} (${key})`).toBe("completed");
      const want = [...Array.from({ length: STEPS }, (_, i) => `${key} step ${i}`), `${key} done`];
      expect(prints(t), `${id}: every step printed once, in order`).toEqual(want);
      const adopted = t.entries.filter((e) => e.kind === "warning").map((e) => e.text);
      expect(adopted, `${id} was never adopted`).toEqual([]);
    });
  }, 120_000);

  it("cut from PostgreSQL: its sessions are adopted, and its late writes refused", async () => {
    // Instance 1 frozen for a moment (less than the lease): instance 0 takes every session.
    fleet.freeze(1);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 4; i++) ids.push((await post(0, `c${i}`)) as string);
      await untilEach("instance 0 to run them", ids, async (id) => {
        const t = await traceOf(fleet.instances[0]!.url, id, TOKEN).catch(() => null);
        return t?.session.state === "running";
      });
    } finally {
      fleet.wake(1);
    }
    await new Promise((r) => setTimeout(r, 1500)); // a step or so on instance 0
    pgCut.cut();
    await new Promise((r) => setTimeout(r, 8000)); // past the lease: instance 1 adopts them
    pgCut.mend();
    const traces = await ended(ids, 1);
    // Time for instance 0's late writes (retried ends, log flushes) to reach PostgreSQL.
    await until(
      "instance 0 to say it lost them",
      () =>
        readFileSync(join(logs, "instance-0.log"), "utf8").includes("declared dead") || undefined,
    );
    await new Promise((r) => setTimeout(r, 3000));
    for (const [n, id] of ids.entries()) {
      const t = await traceOf(fleet.instances[1]!.url, id, TOKEN);
      const key = `c${n}`;
      expect(t.session.state, id).toBe("completed");
      expect(
        t.entries.some((e) => e.text?.includes("resuming here")),
        `${id} adopted`,
      ).toBe(true);
      const out = prints(t);
      expect(
        out.filter((p) => p === `${key} done`),
        `${id} done once`,
      ).toHaveLength(1);
      for (let i = 0; i < STEPS; i++) expect(out, id).toContain(`${key} step ${i}`);
      // What was on record when it ended is what is on record now.
      expect(t).toEqual(traces.get(id));
    }
  }, 180_000);
});
