/**
 * What PostgreSQL and Redis storage cost against the embedded stores on the async accept path,
 * on this machine: `cli up` as a child process per backend, one load client in its own process.
 * Per backend: async webhook accept (a session per request) p50 at c=1 and req/s at c=32, and
 * the same for a call-less trigger (the event is stored, no session). Needs REDIS_URL and
 * DATABASE_URL for those two rows (skipped, and said so, without them).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/storage-backends.ts
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { REPO_ROOT } from "../src/platform/node.ts";
import { checkoutPython } from "../test/support/python.ts";
import { JSON_BODY } from "./context.ts";
import { LoadClient } from "./load/remote.ts";
import { startService } from "./service.ts";

interface Backend {
  name: string;
  env: Record<string, string>;
  cleanup?: () => Promise<void>;
}

const tag = `${process.pid}_${randomBytes(3).toString("hex")}`;
const log = (line: string) => process.stderr.write(`[storage-backends] ${line}\n`);

function backends(): Backend[] {
  // The embedded ones: fs in the data home `cli up` makes, lmdb (the default engine, with its
  // default sync) in a folder of ours.
  const lmdbDir = mkdtempSync(join(tmpdir(), "hookline-bench-lmdb-"));
  const out: Backend[] = [
    { name: "fs (embedded)", env: { SVC_STORAGE: `fs:${join(lmdbDir, "fs")}` } },
    {
      name: "lmdb (embedded)",
      env: { SVC_STORAGE: `lmdb:${join(lmdbDir, "db")}` },
      cleanup: async () => rmSync(lmdbDir, { recursive: true, force: true }),
    },
  ];
  const redisUrl = process.env.REDIS_URL;
  if (redisUrl) {
    const base = `hookline-bench-${tag}`;
    const url = new URL(redisUrl);
    url.searchParams.set("base", base);
    out.push({
      name: "redis",
      env: { SVC_STORAGE: url.toString() },
      async cleanup() {
        const redis = new Redis(redisUrl);
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", `${base}:*`, "COUNT", 1000);
          if (keys.length) await redis.unlink(...keys);
          cursor = next;
        } while (cursor !== "0");
        await redis.quit();
      },
    });
  } else log("REDIS_URL is not set: no redis row");
  const dbUrl = process.env.DATABASE_URL;
  if (dbUrl && redisUrl) {
    const table = `hookline_bench_${tag}`;
    const url = new URL(dbUrl);
    url.searchParams.set("table", table);
    const bus = new URL(redisUrl);
    bus.searchParams.set("base", `hookline-bench-bus-${tag}`);
    out.push({
      name: "postgres (+ redis bus)",
      env: { SVC_STORAGE: url.toString(), SVC_REDIS_URL: bus.toString() },
      async cleanup() {
        const client = new pg.Client({ connectionString: dbUrl });
        await client.connect();
        await client.query(`DROP TABLE IF EXISTS ${table}`);
        await client.end();
      },
    });
  } else log("DATABASE_URL or REDIS_URL is not set: no postgres row");
  return out;
}

async function main() {
  const python = await checkoutPython(REPO_ROOT);
  const client = await LoadClient.start();
  const rows: string[] = [];
  try {
    for (const backend of backends()) {
      log(`${backend.name}: starting`);
      const real = await startService({ python, label: backend.name, env: backend.env });
      try {
        const { hooks } = await real.deploy("trivial");
        const load = (url: string, concurrency: number, count: number) =>
          client.run({ url, body: JSON_BODY, concurrency, count, warmup: 30, maxMs: 30_000 });
        const acc1 = await load(hooks.accept!, 1, 300);
        await real.idle(120_000);
        const acc32 = await load(hooks.accept!, 32, 1500);
        await real.idle(180_000);
        const store1 = await load(hooks.store_only!, 1, 500);
        const store32 = await load(hooks.store_only!, 32, 3000);
        const bad = [acc1, acc32, store1, store32].filter((r) => r.errors || !r.statuses["202"]);
        if (bad.length)
          log(`${backend.name}: non-202 answers: ${JSON.stringify(bad[0]!.statuses)}`);
        rows.push(
          `| ${backend.name} | ${acc1.latency.p50.toFixed(2)} | ${acc32.rps.toFixed(0)} | ${store1.latency.p50.toFixed(2)} | ${store32.rps.toFixed(0)} |`,
        );
        log(rows.at(-1)!);
      } finally {
        await real.close();
        await backend.cleanup?.().catch((e: unknown) => log(`cleanup: ${e}`));
      }
    }
  } finally {
    await client.dispose();
  }
  console.log(
    [
      "| storage | accept p50 c=1 (ms) | accept req/s c=32 | event-only p50 c=1 (ms) | event-only req/s c=32 |",
      "|---|---|---|---|---|",
      ...rows,
    ].join("\n"),
  );
}

await main();
