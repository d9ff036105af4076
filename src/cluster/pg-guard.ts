import pg from "pg";

/**
 * Holds a PostgreSQL advisory lock for as long as this instance runs, so instances on one
 * PostgreSQL store notice each other without Redis. An instance with no bus (no
 * `SVC_REDIS_URL`) takes the lock exclusively: it cannot hand events, stop requests or cache
 * invalidations to another instance, nor take over its sessions, so it must be the only one.
 * Instances with a Redis bus take it shared: any number of them, never next to a lone one.
 * @example const guard = await guardPostgres(url, "hookline_kv", { bus: false });
 */
export async function guardPostgres(
  url: string,
  table: string,
  opts: { bus: boolean },
): Promise<{ dispose(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  // A broken connection drops the lock; the instance goes on (the store answers or not on
  // its own) rather than dying on an unhandled error.
  client.on("error", () => {});
  await client.connect().catch((e: unknown) => {
    const where = new URL(url).host;
    throw new Error(`SVC_STORAGE: cannot reach PostgreSQL at ${where}: ${(e as Error).message}`);
  });
  const fn = opts.bus ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock";
  const r = await client.query(`SELECT ${fn}(hashtext($1)) AS ok`, [`hookline:${table}`]);
  if (r.rows[0]?.ok !== true) {
    await client.end().catch(() => {});
    throw new Error(
      opts.bus
        ? `SVC_STORAGE: an instance without SVC_REDIS_URL is using PostgreSQL table ${table}; instances sharing a store must all set the same SVC_REDIS_URL`
        : `SVC_STORAGE: another instance is using PostgreSQL table ${table}; to run several, set the same SVC_REDIS_URL on every instance (docs/scale-out.md)`,
    );
  }
  let closed: Promise<void> | null = null;
  return {
    dispose() {
      closed ??= client.end().catch(() => {});
      return closed;
    },
  };
}
