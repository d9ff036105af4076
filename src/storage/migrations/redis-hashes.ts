import type { Redis } from "ioredis";
import type { Driver } from "unstorage";
import type { StorageOp } from "../drivers/batch.ts";
import { HASHED, hashPlace } from "../drivers/redis.ts";

/** Old journal keys read per MGET. */
const CHUNK = 1000;

/**
 * Format 2 on Redis: the keys of the `HASHED` namespaces (src/storage/drivers/redis.ts) move
 * from one string key each into one hash per entity: journal steps
 * (`<base>:journals:<session>:<seq>`) into `<base>:journals:<session>`, field `<seq>`, and
 * session index entries (`<base>:session-index:<project>:<state>:<session>`) into
 * `<base>:session-index:<project>`, field `<state>:<session>`. The namespaces `dropped` go. Every move and the new version are one MULTI,
 * so Redis applies all of it or none; a crash before it leaves format 1, moved again at the
 * next start. Finding the old keys is one `KEYS` over the database, once in the store's life.
 * @example await redisHashes(storage.getMount("").driver, stampOp(2));
 */
export async function redisHashes(
  driver: Driver,
  stamp: StorageOp,
  dropped: string[] = [],
): Promise<void> {
  // A connection of its own, to WATCH the version: another instance that migrates first
  // changes it, and this MULTI is then dropped whole.
  const client = (driver.getInstance!() as Redis).duplicate();
  try {
    await move(client, driver, stamp, dropped);
  } finally {
    client.disconnect();
  }
}

async function move(
  client: Redis,
  driver: Driver,
  stamp: StorageOp,
  dropped: string[],
): Promise<void> {
  const base = String((driver.options as { base?: string }).base ?? "").replace(/:+$/, "");
  const full = (key: string) => (base ? `${base}:${key}` : key);
  await client.watch(full(stamp.key));
  const now = Number(await client.get(full(stamp.key)));
  if (now >= Number(stamp.value)) return; // another instance did it
  const multi = client.multi();
  for (const ns of HASHED) {
    const root = full(`${ns}:`);
    const escaped = root.replace(/[*?[\]\\]/g, "\\$&");
    // A string key of format 1 has two parts or more under its namespace; a hash has one.
    const old = (await client.keys(`${escaped}*`)).filter(
      (k) => k.slice(root.length).split(":").length >= 2,
    );
    for (let i = 0; i < old.length; i += CHUNK) {
      const keys = old.slice(i, i + CHUNK);
      const values = await client.mget(...keys);
      keys.forEach((key, j) => {
        const value = values[j];
        const at = hashPlace(`${ns}:${key.slice(root.length)}`);
        if (value === null || value === undefined || !at) return;
        multi.hset(full(at.hash), at.field, value);
        multi.unlink(key);
      });
    }
  }
  for (const ns of dropped) {
    const keys = await client.keys(`${full(`${ns}:`).replace(/[*?[\]\\]/g, "\\$&")}*`);
    for (let i = 0; i < keys.length; i += CHUNK) multi.unlink(...keys.slice(i, i + CHUNK));
  }
  multi.set(full(stamp.key), String(stamp.value));
  const replies = await multi.exec();
  if (replies === null) return; // the version changed meanwhile: another instance moved them
  const failed = replies.find(([err]) => err);
  if (failed) throw failed[0];
}
