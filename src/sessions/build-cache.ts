import type { BuildFiles } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";

/**
 * The few most recent builds, read once: sessions of one deployment share one.
 * @example const builds = buildCache(stores); const build = await builds.get("bld_1");
 */
export function buildCache(stores: Pick<Stores, "builds">, size = 8) {
  const cached = new Map<string, BuildFiles>();
  return {
    async get(id: string): Promise<BuildFiles> {
      const hit = cached.get(id);
      if (hit) return hit;
      const rec = await stores.builds.get(id);
      if (!rec) throw new Error(`build ${id} is gone`);
      const build = { id: rec.id, files: rec.files };
      if (cached.size >= size) cached.delete(cached.keys().next().value!);
      cached.set(id, build);
      return build;
    },
  };
}
