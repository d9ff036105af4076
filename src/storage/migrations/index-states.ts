import type { Storage } from "unstorage";
import type { SessionState } from "../../model/records.ts";
import { atomicBatch, type StorageOp } from "../drivers/batch.ts";
import { STATES } from "../session-records.ts";

/**
 * Format 3: the session index entries of the layout before states were part of the key
 * (`session-index:<project>:<id>` = state) rewritten as `session-index:<project>:<state>:<id>`,
 * with the stamp, in one commit (that layout is of early stores, small ones). Until format 3
 * every start listed the whole index to look for them.
 */
export async function indexStates(storage: Storage, stamp: StorageOp): Promise<void> {
  const legacy = (await storage.getKeys("session-index"))
    .map((k) => k.slice("session-index:".length))
    .filter((k) => k.split(":").length === 2);
  const ops: StorageOp[] = [];
  for (const k of legacy) {
    const [projectId, id] = k.split(":") as [string, string];
    const state = await storage.getItem<string>(`session-index:${k}`);
    ops.push({ key: `session-index:${k}`, value: null });
    if (STATES.includes(state as SessionState)) {
      ops.push({ key: `session-index:${projectId}:${state}:${id}`, value: 1 });
    }
  }
  await atomicBatch(storage, [...ops, stamp]);
}
