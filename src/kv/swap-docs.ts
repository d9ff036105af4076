import type { Storage } from "unstorage";
import { HooklineError } from "../errors.ts";
import { keyedLock } from "../locks.ts";
import { type DocAccess, emptyDoc, type StoreDoc } from "./doc.ts";

/** Conflicts retried before giving up: each one means another instance changed the document. */
const MAX_ATTEMPTS = 100;

/**
 * Store documents under `store:<projectId>` on a driver that can compare-and-set a key on its
 * server (PostgreSQL's `swap`), so that the instances of a fleet sharing it all count: changes
 * are serialised per project in this process and optimistic across processes (read, change,
 * swap; on a conflict, read again).
 * @example const docs = swapDocs(storage, capabilitiesOf(storage).swap!);
 */
export function swapDocs(
  storage: Storage,
  swap: (key: string, expected: string | null, next: string | null) => Promise<boolean>,
): DocAccess {
  const locks = keyedLock();
  const key = (projectId: string) => `store:${projectId}`;
  const readText = async (projectId: string) => {
    const raw = await storage.getItemRaw<string>(key(projectId));
    return raw === null || raw === undefined ? null : String(raw);
  };
  const parse = (text: string | null): StoreDoc =>
    text === null ? emptyDoc() : (JSON.parse(text) as StoreDoc);
  return {
    mutate: (projectId, change) =>
      locks.run(projectId, async () => {
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          const text = await readText(projectId);
          const { doc, result } = change(parse(text));
          if (!doc) return result;
          if (await swap(key(projectId), text, JSON.stringify(doc))) return result;
          await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
        }
        throw new HooklineError(
          "unavailable",
          `store: project ${projectId} changed ${MAX_ATTEMPTS} times while one change was applied; try again`,
        );
      }),
    read: async (projectId) => parse(await readText(projectId)),
    remove: (projectId) => locks.run(projectId, () => storage.removeItem(key(projectId))),
    dispose: async () => {},
  };
}
