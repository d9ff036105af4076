import { randomBytes } from "node:crypto";
import pg from "pg";
import { REDIS_URL, redisTestUrl, warnIfNoRedis } from "./redis.ts";

/**
 * The PostgreSQL tests use: `DATABASE_URL` (trust auth on the development and CI machines).
 * Without it those tests skip, and say so once, loudly; `.ci/run` sets it so CI never skips them.
 */
export const DATABASE_URL = process.env.DATABASE_URL;

let warned = false;
export function warnIfNoPostgres(what: string): boolean {
  if (DATABASE_URL) return true;
  if (!warned) {
    warned = true;
    console.warn(
      `\n*** DATABASE_URL is not set: SKIPPING ${what} (set DATABASE_URL to run them) ***\n`,
    );
  }
  return false;
}

const made: string[] = [];

/**
 * A storage URL on a table of its own (`?table=`), so test files running at once never see each
 * other's keys. `dropPostgresTestTables` removes every table handed out here.
 * @example const url = postgresTestUrl(); // postgres://…/postgres?table=hookline_t_1234_ab12cd34
 */
export function postgresTestUrl(): string {
  const table = `hookline_t_${process.pid}_${randomBytes(4).toString("hex")}`;
  made.push(table);
  const url = new URL(DATABASE_URL!);
  url.searchParams.set("table", table);
  return url.toString();
}

/** Drops the tables `postgresTestUrl` handed out in this process. */
export async function dropPostgresTestTables(): Promise<void> {
  if (!DATABASE_URL || made.length === 0) return;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    for (const table of made.splice(0)) {
      const tables = [table, ...["owners", "instances", "once"].map((t) => `${table}_${t}`)];
      await client.query(`DROP TABLE IF EXISTS ${tables.join(", ")}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Whether a fleet test can run: PostgreSQL holds the state and Redis is the bus. Without either
 * it skips, and says so once.
 */
export function warnIfNoFleet(what: string): boolean {
  return warnIfNoPostgres(what) && warnIfNoRedis(what);
}

/**
 * What the instances of a fleet test share: a PostgreSQL table of their own (`postgresTestUrl`)
 * and Redis as the bus on a key prefix of its own; `memory:` and no bus when either is missing
 * (the test skips then). `dropPostgresTestTables` removes the table after.
 * @example const { storage, redisUrl } = fleetStores(); useEmulator({ storage, redisUrl });
 */
export function fleetStores(): { storage: string; redisUrl?: string } {
  if (!DATABASE_URL || !REDIS_URL) return { storage: "memory:" };
  return { storage: postgresTestUrl(), redisUrl: redisTestUrl() };
}
