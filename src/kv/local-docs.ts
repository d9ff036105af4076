import { prefixStorage, type Storage } from "unstorage";
import { keyedLock } from "../locks.ts";
import { type DocAccess, emptyDoc, type StoreDoc } from "./doc.ts";

/** One per process, shared by every store object: the memory and fs paths serialise here. */
const localLocks = keyedLock();

/**
 * Store documents in unstorage under `store:<projectId>`, changed atomically by serialising the
 * operations of a project in this process (the memory and fs drivers: one instance). Reads queue
 * behind writes too: the fs driver does not write a file in one step.
 * @example const docs = localDocs(storage); await docs.read("prj_x") // { values: {}, published: [] }
 */
export function localDocs(storage: Storage): DocAccess {
  const docs = prefixStorage(storage, "store");
  const load = async (projectId: string) => (await docs.getItem<StoreDoc>(projectId)) ?? emptyDoc();
  return {
    mutate: (projectId, change) =>
      localLocks.run(projectId, async () => {
        const { doc: next, result } = change(await load(projectId));
        if (next) await docs.setItem(projectId, next);
        return result;
      }),
    read: (projectId) => localLocks.run(projectId, () => load(projectId)),
    remove: (projectId) => localLocks.run(projectId, () => docs.removeItem(projectId)),
    dispose: async () => {},
  };
}
