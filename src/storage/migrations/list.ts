import type { Storage } from "unstorage";
import { atomicBatch, type StorageOp } from "../drivers/batch.ts";
import { capabilitiesOf } from "../drivers/capabilities.ts";
import { indexStates } from "./index-states.ts";
import { redisHashes } from "./redis-hashes.ts";

/**
 * One step from the format before `to` to `to`. `run` must commit its changes and `stamp`
 * (the new version) in one step a crash cannot split, and may run again after a crash that
 * came before that step.
 */
export interface Migration {
  to: number;
  /** What changes, for the start-up line and docs/operations.md. */
  what: string;
  run(storage: Storage, stamp: StorageOp): Promise<void>;
}

/** The web UI's paging index of format 1, replaced by the session index in format 2. */
const FEED = "ui-session-feed";

/**
 * Every format change, oldest first. Format 1 is every store written before versions were
 * kept (main at e122539 and earlier).
 */
export const MIGRATIONS: Migration[] = [
  {
    to: 2,
    what:
      "on redis, journals (one hash per session) and the session index (one per project); " +
      "the web UI's own paging index (ui-session-feed) removed, folded into the session index",
    async run(storage, stamp) {
      // A driver that keeps namespaces as hashes moves its old keys there itself.
      if (capabilitiesOf(storage).hashed) {
        return redisHashes(storage.getMount("").driver, stamp, [FEED]);
      }
      const feed = await storage.getKeys(FEED);
      await atomicBatch(storage, [...feed.map((key) => ({ key, value: null })), stamp]);
    },
  },
  {
    to: 3,
    what:
      "session index entries of the layout before states were in the key rewritten, " +
      "so that a start no longer lists the whole index to look for them",
    run: indexStates,
  },
];
