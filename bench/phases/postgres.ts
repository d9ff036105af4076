import { randomBytes } from "node:crypto";
import pg from "pg";
import type { SessionRecord } from "../../src/model/records.ts";
import { createStorageFromUrl } from "../../src/storage/driver.ts";
import { postgresTarget } from "../../src/storage/drivers/postgres.ts";
import type { OwnerWrite } from "../../src/storage/fence.ts";
import { createStores } from "../../src/storage/records.ts";
import { type Bench, JSON_BODY } from "../context.ts";
import { startService } from "../service.ts";
import { median } from "../stats.ts";
import { row, targetRow } from "../table.ts";

/** Session writes timed per kind, alternating plain and fenced so that both see the same load. */
const WRITES = 300;
/** Async sessions of the fleet burst. */
const FLEET_SESSIONS = 400;

/** A table of its own on DATABASE_URL, dropped (with its owner tables) at the end. */
function benchTable(dbUrl: string) {
  const table = `hookline_bench_${process.pid}_${randomBytes(3).toString("hex")}`;
  const url = new URL(dbUrl);
  url.searchParams.set("table", table);
  return {
    url: url.toString(),
    /**
     * Resolves once both instances are idle and no session is live (queued sessions included:
     * an instance's idle says nothing of one accepted and not yet taken); one statement a look.
     */
    async settled(instances: { idle(ms: number): Promise<boolean> }[], timeoutMs: number) {
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      const deadline = Date.now() + timeoutMs;
      try {
        while (Date.now() < deadline) {
          await Promise.all(instances.map((i) => i.idle(timeoutMs)));
          const r = await c.query(`SELECT count(*)::int AS n FROM ${table}_owners`);
          if ((r.rows[0] as { n: number }).n === 0) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      const all = ["", "_owners", "_instances", "_once"].map((s) => `${table}${s}`);
      await c.query(`DROP TABLE IF EXISTS ${all.join(", ")}`).finally(() => c.end());
    },
  };
}

/**
 * What a fenced session write costs against the same write without the fence (the release before
 * wrote sessions unfenced): a session's record, its log and its index entry, one statement each,
 * in this process over one connection pool, alternating. Median of each.
 */
async function writeCost(dbUrl: string): Promise<{ plain: number; fenced: number }> {
  const t = benchTable(dbUrl);
  const storage = createStorageFromUrl(t.url);
  const stores = createStores(storage);
  const target = postgresTarget(t.url)!;
  try {
    await storage.setItem("meta:probe", 1); // the tables exist before timing
    const owners = new pg.Pool({ connectionString: target.url, max: 1 });
    const times = { plain: [] as number[], fenced: [] as number[] };
    const record = (i: number, state: SessionRecord["state"]) =>
      ({
        id: `ses_${String(i).padStart(26, "0")}`,
        project_id: "prj_bench",
        state,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      }) as SessionRecord;
    for (let i = 0; i < WRITES; i++) {
      const id = record(i, "running").id;
      await owners.query(
        `INSERT INTO ${target.table}_owners (session_id, owner, epoch) VALUES ($1, 'bench', 1)`,
        [id],
      );
      const log = [{ t: new Date().toISOString(), kind: "print", text: `line ${i}` }] as never;
      const own: OwnerWrite = { session: id, kind: "fence", owner: "bench", epoch: 1 };
      for (const fenced of i % 2 ? [true, false] : [false, true]) {
        const t0 = performance.now();
        await stores.sessions.commit(id, {
          record: record(i, "running"),
          was: "created",
          log,
          ...(fenced && { own }),
        });
        (fenced ? times.fenced : times.plain).push(performance.now() - t0);
      }
    }
    await owners.end();
    return { plain: median(times.plain), fenced: median(times.fenced) };
  } finally {
    await storage.dispose();
    await t.drop();
  }
}

/**
 * A backend reports its counts to pg_stat_database at most once a second, and an idle one within
 * 10 s (PGSTAT_IDLE_INTERVAL): waited out before each read, so that the transactions of the
 * phase before are counted before the burst and the burst's are all in by its end.
 */
const STATS_FLUSH_MS = 11_000;

/** Transactions committed in the database so far (every statement outside a transaction is one). */
async function commits(dbUrl: string): Promise<number> {
  await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    const r = await c.query(
      "SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    return Number(r.rows[0].n);
  } finally {
    await c.end();
  }
}

/**
 * The fleet as docs/scale-out.md sets it up, on this machine: two `cli up` instances on one
 * PostgreSQL with Redis as their bus. Async accept at c=1 against one instance, a burst of async
 * sessions spread over both (taken off PostgreSQL's queue), the transactions PostgreSQL committed
 * per session over that burst (every statement of every instance, reads, heartbeats and polls
 * included), and what a fenced session write costs beside an unfenced one. Needs DATABASE_URL and
 * REDIS_URL; says so and skips without them.
 */
export async function postgresPhase(b: Bench, embeddedAcceptP50: number | undefined) {
  const dbUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!dbUrl || !redisUrl) {
    b.notes.push("- PostgreSQL fleet: DATABASE_URL or REDIS_URL is not set; not measured");
    return;
  }
  const cost = await writeCost(dbUrl);
  b.data["postgres.write"] = cost;
  b.rows.push(
    targetRow(
      "PostgreSQL session write, fenced (owner and epoch checked in the statement)",
      "ms",
      cost.fenced,
      cost.plain,
      "the same write unfenced",
      { on: "ratio", limit: 1.2, below: true },
    ),
  );

  const t = benchTable(dbUrl);
  const bus = new URL(redisUrl);
  bus.searchParams.set("base", `hookline-bench-${process.pid}`);
  // One secret key for both: it seals what either stores (docs/scale-out.md).
  const env = {
    SVC_STORAGE: t.url,
    SVC_REDIS_URL: bus.toString(),
    SVC_SECRET_KEY: randomBytes(32).toString("hex"),
  };
  const a = await startService({ python: b.python, label: "postgres fleet A", env });
  const other = await startService({ python: b.python, label: "postgres fleet B", env });
  try {
    const { hooks, projectId } = await a.deploy("trivial");
    await new Promise((r) => setTimeout(r, 1000)); // B hears of the deploy over the bus
    const acc = await b.load("postgres.accept.c1", {
      url: hooks.accept!,
      body: JSON_BODY,
      concurrency: 1,
      count: 300,
      warmup: 30,
      maxMs: 30_000,
    });
    await Promise.all([a.idle(120_000), other.idle(120_000)]);
    const before = await commits(dbUrl);
    const t0 = Date.now();
    const burst = await b.load("postgres.burst.c32", {
      url: hooks.accept!,
      body: JSON_BODY,
      concurrency: 32,
      count: FLEET_SESSIONS,
      maxMs: 60_000,
    });
    await t.settled([a, other], 180_000);
    const perSession = ((await commits(dbUrl)) - before) / FLEET_SESSIONS;
    const done = (await a.sessions(projectId, "completed")).filter(
      (s) => Date.parse(s.created_at) >= t0 && s.trigger_name === "accept",
    );
    const lastEnd = Math.max(...done.map((s) => Date.parse(s.ended_at ?? s.updated_at)));
    const rate = (done.length * 1000) / Math.max(1, lastEnd - t0);
    b.data["postgres.fleet"] = {
      acceptP50: acc.latency.p50,
      acceptP99: acc.latency.p99,
      accepted: burst.statuses["202"] ?? 0,
      completed: done.length,
      sessionsPerS: rate,
      commitsPerSession: perSession,
    };
    const floor = embeddedAcceptP50 ?? null;
    b.rows.push(
      row(
        "PostgreSQL fleet (2 instances): async accept p50, c=1",
        "ms",
        acc.latency.p50,
        floor,
        "default storage, one instance",
      ),
      row("PostgreSQL fleet: async accept p99, c=1", "ms", acc.latency.p99, null, "–"),
      row(
        `PostgreSQL fleet: async sessions/s (${done.length}/${FLEET_SESSIONS} completed)`,
        "/s",
        rate,
        null,
        "–",
      ),
      row(
        "PostgreSQL fleet: transactions committed per async session (all statements, both instances)",
        "",
        perSession,
        null,
        "–",
      ),
    );
  } finally {
    await a.close();
    await other.close();
    await t.drop().catch(() => {});
  }
}
