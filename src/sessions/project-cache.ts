import type { ProjectDoc } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";

/** Projects kept at most; the oldest goes first past it. */
const MAX_PROJECTS = 1000;

/**
 * The project a session starts with (its vars, its connections), read from storage at most once
 * per `ttlMs` per project, and dropped at once when the project changes (`forget`: a deploy or
 * a var set here, or on another instance over the bus, as the address cache is). `ttlMs` 0
 * keeps nothing: every read goes to storage (one instance, whose embedded store reads in
 * microseconds). In a fleet the bus may lose an invalidation (a Redis restart): entries age out.
 * @example const projects = projectCache(stores, 5000); const doc = await projects.get("prj_1");
 */
export function projectCache(
  stores: Pick<Stores, "projects">,
  ttlMs: number,
  now: () => number = Date.now,
) {
  const docs = new Map<string, { doc: ProjectDoc; at: number }>();
  return {
    async get(id: string): Promise<ProjectDoc | null> {
      const hit = docs.get(id);
      if (hit && now() - hit.at < ttlMs) return hit.doc;
      const at = now();
      const doc = await stores.projects.get(id);
      docs.delete(id);
      if (!doc || ttlMs <= 0) return doc;
      if (docs.size >= MAX_PROJECTS) docs.delete(docs.keys().next().value!);
      docs.set(id, { doc, at });
      return doc;
    },
    /** The project changed: its next read goes to storage. */
    forget(id: string): void {
      docs.delete(id);
    },
  };
}

export type ProjectCache = ReturnType<typeof projectCache>;
