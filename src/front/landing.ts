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
 * What reaches the host once the front's writes have landed: an async session is handed over
 * once its commit has (a stop waits for it, counted as in hand); a held (sync) one as soon as
 * it is logged, its request waiting for its outcome and not for LMDB, followed by `landed`
 * once its commit is in (the host writes nothing of it before: a later write of its landing
 * first would be overwritten by `created`); and a request passed on waits for every commit
 * before it and for the messages posted before it (a client that reads or watches a session
 * its webhook was just answered for finds it, live). Without an accept log, only for the
 * messages.
 * @example const toHost = landing(accepts, gate, post); toHost.post({ t: "adopt", … });
 */
export function landing(
  accepts: AcceptLog | null,
  gate: FrontGate,
  post: ((m: FrontMessage) => void) & { afterSent(fn: () => void): void },
) {
  type Forward = (req: IncomingMessage, res: ServerResponse) => void;
  // A request passed on goes after the messages posted before it (a session's hand-over).
  const passOn = (f: Forward): Forward => {
    return (req, res) => post.afterSent(() => f(req, res));
  };
  if (!accepts) return { post, forward: passOn };
  return {
    post(m: FrontMessage): void {
      if (m.t !== "adopt") {
        post(m);
        return;
      }
      if (m.holdMs !== undefined) {
        post({ ...m, landing: true });
        accepts.after(() => post({ t: "landed", id: m.id }));
        return;
      }
      gate.handing(1);
      accepts.after(() => {
        post(m);
        gate.handing(-1);
      });
    },
    forward: (f: Forward): Forward => {
      const after = passOn(f);
      return (req, res) => accepts.after(() => after(req, res));
    },
  };
}
