import { Redis } from "ioredis";
import { HooklineError } from "../errors.ts";
import { keyedLock } from "../locks.ts";
import type { DocAccess, Mutate, StoreDoc } from "./doc.ts";

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

/** Conflicts retried before giving up: each one means another instance changed the document. */
const MAX_ATTEMPTS = 100;

/**
 * Atomic read-change-write of store documents on Redis, under `${prefix}<projectId>` (the key the
 * unstorage redis driver uses for `store:<projectId>`, so both read the same JSON). Changes are
 * serialised per project in this process and made optimistic across processes: read, change,
 * compare-and-set, and on a conflict read again.
 * @example const m = redisMutator("redis://127.0.0.1:6379", "hookline:store:");
 */
export function redisMutator(url: string, prefix: string): DocAccess {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {}); // a call fails on its own; the client reconnects
  const locks = keyedLock();
  let disposed = false;

  const readText = (projectId: string) => redis.get(prefix + projectId);
  const parse = (text: string | null): StoreDoc =>
    text === null ? { values: {}, published: [] } : (JSON.parse(text) as StoreDoc);

  const mutate: Mutate = (projectId, change) =>
    locks.run(projectId, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const text = await readText(projectId);
        const { doc, result } = change(parse(text));
        if (!doc) return result;
        const swapped = await redis.eval(
          CAS,
          1,
          prefix + projectId,
          text === null ? "0" : "1",
          text ?? "",
          JSON.stringify(doc),
        );
        if (swapped === 1) return result;
        await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
      }
      throw new HooklineError(
        "unavailable",
        `store: project ${projectId} changed ${MAX_ATTEMPTS} times while one change was applied; try again`,
      );
    });

  return {
    mutate,
    async read(projectId: string): Promise<StoreDoc> {
      return parse(await readText(projectId));
    },
    async remove(projectId: string): Promise<void> {
      await locks.run(projectId, () => redis.del(prefix + projectId));
    },
    async dispose(): Promise<void> {
      if (disposed) return;
      disposed = true;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
