import type { Storage } from "unstorage";
import { HooklineError } from "../errors.ts";
import { keyedLock } from "../locks.ts";
import { type DocAccess, emptyDoc, type StoreDoc } from "./doc.ts";

/** Conflicts retried before giving up: each one means another instance changed the document. */
const MAX_ATTEMPTS = 100;

/** What a server that keeps the documents can do with one project's document (its JSON text). */
export interface DocServer {
  read(projectId: string): Promise<string | null>;
  /** Writes `next` only if the document still holds `expected` (absent when null); true if so. */
  swap(projectId: string, expected: string | null, next: string): Promise<boolean>;
  remove(projectId: string): Promise<unknown>;
  dispose?(): Promise<void>;
}

/**
 * Store documents changed atomically for every instance sharing `server`: changes are
 * serialised per project in this process and optimistic across processes (read, change,
 * compare-and-set; on a conflict, read again). Redis (redis-mutate.ts) and PostgreSQL
 * (`swapDocs`) are two such servers.
 * @example const docs = casDocs({ read, swap, remove });
 */
export function casDocs(server: DocServer): DocAccess {
  const locks = keyedLock();
  const parse = (text: string | null): StoreDoc =>
    text === null ? emptyDoc() : (JSON.parse(text) as StoreDoc);
  let disposed = false;
  return {
    mutate: (projectId, change) =>
      locks.run(projectId, async () => {
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          const text = await server.read(projectId);
          const { doc, result } = change(parse(text));
          if (!doc) return result;
          if (await server.swap(projectId, text, JSON.stringify(doc))) return result;
          await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
        }
        throw new HooklineError(
          "unavailable",
          `store: project ${projectId} changed ${MAX_ATTEMPTS} times while one change was applied; try again`,
        );
      }),
    read: async (projectId) => parse(await server.read(projectId)),
    remove: async (projectId) => {
      await locks.run(projectId, () => server.remove(projectId));
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await server.dispose?.();
    },
  };
}

/**
 * Store documents under `store:<projectId>` on a driver that can compare-and-set a key on its
 * server (PostgreSQL's `swap`), so that the instances of a fleet sharing it all count.
 * @example const docs = swapDocs(storage, capabilitiesOf(storage).swap!);
 */
export function swapDocs(
  storage: Storage,
  swap: (key: string, expected: string | null, next: string | null) => Promise<boolean>,
): DocAccess {
  const key = (projectId: string) => `store:${projectId}`;
  return casDocs({
    async read(projectId) {
      const raw = await storage.getItemRaw<string>(key(projectId));
      return raw === null || raw === undefined ? null : String(raw);
    },
    swap: (projectId, expected, next) => swap(key(projectId), expected, next),
    remove: (projectId) => storage.removeItem(key(projectId)),
  });
}
