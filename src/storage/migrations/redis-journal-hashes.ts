import type { Redis } from "ioredis";
import type { Driver } from "unstorage";
import type { StorageOp } from "../drivers/batch.ts";

/** Old journal keys read per MGET. */
const CHUNK = 1000;

/**
 * Format 2 on Redis: journal steps move from one string key each
 * (`<base>:journals:<session>:<seq>`) to one hash per session (`<base>:journals:<session>`,
 * field `<seq>`, src/storage/drivers/redis.ts). Every move and the new version are one MULTI,
 * so Redis applies all of it or none; a crash before it leaves format 1, moved again at the
 * next start. Finding the old keys is one `KEYS` over the database, once in the store's life.
 * @example await redisJournalHashes(storage.getMount("").driver, stampOp(2));
 */
export async function redisJournalHashes(driver: Driver, stamp: StorageOp): Promise<void> {
  // A connection of its own, to WATCH the version: another instance that migrates first
  // changes it, and this MULTI is then dropped whole.
  const client = (driver.getInstance!() as Redis).duplicate();
  try {
    await move(client, driver, stamp);
  } finally {
    client.disconnect();
  }
}

async function move(client: Redis, driver: Driver, stamp: StorageOp): Promise<void> {
  const base = String((driver.options as { base?: string }).base ?? "").replace(/:+$/, "");
  const full = (key: string) => (base ? `${base}:${key}` : key);
  const root = full("journals:");
  await client.watch(full(stamp.key));
  const now = Number(await client.get(full(stamp.key)));
  if (now >= Number(stamp.value)) return; // another instance did it
  const escaped = root.replace(/[*?[\]\\]/g, "\\$&");
  // Old keys have three parts under the base (journals, session, seq); a hash has two.
  const old = (await client.keys(`${escaped}*`)).filter(
    (k) => k.slice(root.length).split(":").length === 2,
  );
  const multi = client.multi();
  for (let i = 0; i < old.length; i += CHUNK) {
    const keys = old.slice(i, i + CHUNK);
    const values = await client.mget(...keys);
    keys.forEach((key, j) => {
      const value = values[j];
      if (value === null || value === undefined) return;
      const [session, seq] = key.slice(root.length).split(":") as [string, string];
      multi.hset(`${root}${session}`, seq, value);
      multi.unlink(key);
    });
  }
  multi.set(full(stamp.key), String(stamp.value));
  const replies = await multi.exec();
  if (replies === null) return; // the version changed meanwhile: another instance moved them
  const failed = replies?.find(([err]) => err);
  if (failed) throw failed[0];
}
