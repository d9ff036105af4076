import type { IncomingMessage, ServerResponse } from "node:http";
import { createStorage, type Storage } from "unstorage";
import { AcceptLog, acceptLogDir, withAcceptLog } from "../storage/accept-log.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { lmdbDriver } from "../storage/drivers/lmdb.ts";
import { parseStorageUrl } from "../storage-url.ts";
import type { FrontGate } from "./gate.ts";
import type { FrontMessage } from "./messages.ts";

/**
 * The front's store: under LMDB's default `sync=normal`, its batches (an accepted webhook's
 * event and session) go through an accept log, so the answer waits for one file write, not for
 * the commit (docs/storage.md "The accept log"); under `sync=meta` or `full`, which promise a
 * flush before a write returns, and any other store, as the host opens it. `failed`: a logged
 * batch's commit failed.
 * @example const { storage, accepts } = frontStorage(settings.storage, onFailed);
 */
export function frontStorage(
  url: string,
  failed: (err: unknown) => void,
): { storage: Storage; accepts: AcceptLog | null } {
  const target = parseStorageUrl(url);
  if (target.kind !== "lmdb" || target.sync !== "normal") {
    return { storage: createStorageFromUrl(url), accepts: null };
  }
  const lmdb = lmdbDriver({ path: target.dir, sync: target.sync });
  const accepts = new AcceptLog(acceptLogDir(target.dir), { commit: lmdb.batch, failed });
  // Opened now: opening takes LMDB's write lock a moment, which a first webhook would wait for.
  lmdb.getInstance?.();
  return { storage: createStorage({ driver: withAcceptLog(lmdb, accepts) }), accepts };
}

/**
 * What reaches the host once the front's writes have landed: a session is handed over once its
 * commit has (the host reads it from the store; a stop waits for it, counted as in hand), and a
 * request passed on waits for every commit before it (a client that reads a session its webhook
 * was just answered for finds it). Without an accept log, at once.
 * @example const toHost = landing(accepts, gate, post); toHost.post({ t: "adopt", … });
 */
export function landing(
  accepts: AcceptLog | null,
  gate: FrontGate,
  post: (m: FrontMessage) => void,
) {
  type Forward = (req: IncomingMessage, res: ServerResponse) => void;
  if (!accepts) return { post, forward: (f: Forward) => f };
  return {
    post(m: FrontMessage): void {
      if (m.t !== "adopt") {
        post(m);
        return;
      }
      gate.taking(1);
      accepts.after(() => {
        post(m);
        gate.taking(-1);
      });
    },
    forward: (f: Forward): Forward => {
      return (req, res) => accepts.after(() => f(req, res));
    },
  };
}
