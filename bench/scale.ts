/**
 * Sessions per second with one, two and three instances on this machine: the same PostgreSQL
 * (Redis the bus), the same round-robin router (test/support/fleet.ts), async webhooks of a
 * handler that does nothing, so the figure is the service's own cost per session.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/scale.ts [--sessions 600]
 *
 * Each fleet gets a fresh table and key prefix. Throughput = sessions / (first post → last
 * completed).
 */
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { Fleet } from "../test/support/fleet.ts";
import { testPython } from "../test/support/python.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const at = process.argv.indexOf("--sessions");
const SESSIONS = at > 0 ? Number(process.argv[at + 1]) : 600;
const CONCURRENCY = 32;
const TOKEN = "bench-token";
const auth = { authorization: `Bearer ${TOKEN}` };
const FIXTURE = join(import.meta.dirname, "..", "test", "fixtures", "scale");

async function measure(
  instances: number,
): Promise<{ perSecond: number; p50: number; p95: number }> {
  const name = `hookline_bench_scale_${process.pid}_${instances}_${Date.now()}`;
  const bus = new URL(REDIS_URL);
  bus.searchParams.set("base", name);
  const storage = new URL(DATABASE_URL);
  storage.searchParams.set("table", name);
  const fleet = new Fleet({
    SVC_STORAGE: storage.toString(),
    SVC_REDIS_URL: bus.toString(),
    SVC_SECRET_KEY: "00".repeat(32),
    SVC_API_TOKEN: TOKEN,
    SVC_WORKER_PYTHON: await testPython(),
  });
  try {
    await fleet.start(instances);
    const first = fleet.instances[0]!.url;
    const hooks = await fleet.deploy(FIXTURE, TOKEN);
    const hook = (name: string) => hooks[name]!;
    // Every instance prepares the build and warms its fork server first.
    for (const inst of fleet.instances) {
      for (let i = 0; i < 3; i++) await fetch(inst.url + hook("ask"), { method: "POST" });
    }
    const accepts: number[] = [];
    const start = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SESSIONS) {
          next++;
          const t = performance.now();
          const res = await fetch(fleet.url + hook("quick"), { method: "POST" });
          await res.arrayBuffer();
          if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
          accepts.push(performance.now() - t);
        }
      }),
    );
    for (;;) {
      const res = await fetch(`${first}/api/v1/sessions?project=scale_rules&limit=10000`, {
        headers: auth,
      });
      const { sessions } = (await res.json()) as {
        sessions: { state: string; trigger_name: string }[];
      };
      const done = sessions.filter(
        (s) => s.trigger_name === "quick" && s.state !== "created" && s.state !== "running",
      );
      if (done.length >= SESSIONS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - start) / 1000;
    accepts.sort((a, b) => a - b);
    return {
      perSecond: SESSIONS / seconds,
      p50: accepts[Math.floor(accepts.length * 0.5)]!,
      p95: accepts[Math.floor(accepts.length * 0.95)]!,
    };
  } finally {
    await fleet.dispose();
    // The fleet's tables go with it (the key table and the owner tables beside it).
    const db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    const tables = ["", "_owners", "_instances", "_once"].map((t) => name + t);
    await db.query(`DROP TABLE IF EXISTS ${tables.join(", ")}`);
    await db.end();
  }
}

console.log(
  `${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}; ${SESSIONS} async sessions each`,
);
console.log("instances | sessions/s | accept p50 ms | accept p95 ms");
for (const n of [1, 2, 3]) {
  const r = await measure(n);
  console.log(`${n} | ${r.perSecond.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)}`);
}
