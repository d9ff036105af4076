import { localCluster, postgresCluster } from "../cluster/cluster.ts";
import type { Settings } from "../config.ts";
import type { Logger } from "../log.ts";
import { redisTarget } from "../storage/driver.ts";
import { postgresTarget } from "../storage/drivers/postgres.ts";

/**
 * The other instances (docs/scale-out.md): on PostgreSQL the database decides who owns each
 * session and instances signal over SVC_REDIS_URL (without it one instance runs alone, and a
 * second is refused at start). Any other store serves one instance: on Redis alone, `mark`
 * holds this instance's claim to the store, let go with the cluster.
 */
export async function joinCluster(
  settings: Settings,
  log: Logger,
  mark: Parameters<typeof localCluster>[0],
) {
  const pg = postgresTarget(settings.storage);
  const redis =
    redisTarget(settings.storage) ??
    (pg && settings.redisUrl ? redisTarget(settings.redisUrl) : null);
  if (pg && !redis) log.info("storage: postgres without SVC_REDIS_URL: this instance runs alone");
  if (settings.redisUrl && !pg) log.warn("SVC_REDIS_URL is used with postgres:// storage only");
  if (!pg) return { redis, cluster: localCluster(mark) };
  // The database decides who owns each session; Redis is only the bus.
  const cluster = await postgresCluster({
    ...pg,
    redis,
    leaseMs: settings.leaseMs,
    log: (line) => log.warn(line),
    onLost: (id, why) =>
      log.warn(`session ${id}: another instance owns it now (${why}); it stops here`),
  });
  return { redis, cluster };
}
