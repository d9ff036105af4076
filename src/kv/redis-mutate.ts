import { Redis } from "ioredis";
import type { DocAccess } from "./doc.ts";
import { casDocs } from "./swap-docs.ts";

/**
 * Compare-and-set in one step on the server: write ARGV[3] (or delete, when it is empty) only if
 * the key still holds ARGV[2] (ARGV[1] = "0": only if it is still absent). A script rather than
 * WATCH/MULTI because WATCH belongs to the connection, and this one connection serves every
 * project's operations at once.
 */
const CAS = `
local cur = redis.call('GET', KEYS[1])
if (ARGV[1] == '0' and cur == false) or (ARGV[1] == '1' and cur == ARGV[2]) then
  if ARGV[3] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[3]) end
  return 1
end
return 0`;

/**
 * Atomic read-change-write of store documents on Redis, under `${prefix}<projectId>` (the key the
 * unstorage redis driver uses for `store:<projectId>`, so both read the same JSON): `casDocs`
 * over this Redis, its compare-and-set one script.
 * @example const m = redisMutator("redis://127.0.0.1:6379", "hookline:store:");
 */
export function redisMutator(url: string, prefix: string): DocAccess {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {}); // a call fails on its own; the client reconnects
  return casDocs({
    read: (projectId) => redis.get(prefix + projectId),
    async swap(projectId, expected, next) {
      const absent = expected === null ? "0" : "1";
      const args = [prefix + projectId, absent, expected ?? "", next];
      return (await redis.eval(CAS, 1, ...args)) === 1;
    },
    remove: (projectId) => redis.del(prefix + projectId),
    async dispose() {
      await redis.quit().catch(() => redis.disconnect());
    },
  });
}
