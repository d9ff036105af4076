import type { Cluster } from "../cluster/cluster.ts";
import type { ProjectKv } from "../kv/project-kv.ts";
import type { Logger } from "../log.ts";
import type { SessionRecord } from "../model/records.ts";
import type { TokenRefresher } from "../oauth/index.ts";
import type { Observer } from "../observe/observer.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { FrontCounters } from "../sessions/context.ts";
import type { SessionLimits } from "../sessions/core.ts";
import type { SessionManagerOptions } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";
import type { Pruner } from "../storage/retention.ts";

/** What the session core is given beside the host's options: the parts composed before it. */
export interface SessionCoreParts {
  stores: Stores;
  observer: Observer;
  log: Logger;
  cluster: Cluster;
  pruner: Pruner;
  kv: ProjectKv;
  /** The overview's counters (src/stats/): told of every session that ends here. */
  stats?: { ended(record: SessionRecord): void };
  /** Refreshes connections' OAuth tokens (before a session, and for `refresh_oauth`). */
  oauth?: TokenRefresher;
}

/**
 * The session core's options: the host's limits with their defaults, the runtime seen by the
 * observer, and every ended session and stored event told to the pruner (history stays bounded).
 * @example new SessionManager(sessionOptions({ runtime, secrets }, { stores, observer, log, cluster, pruner, kv }));
 */
export function sessionOptions(
  opts: {
    runtime: Runtime;
    secrets: SecretBox;
    limits?: Partial<SessionLimits>;
    publicUrl?: () => string;
    front?: FrontCounters | undefined;
  },
  parts: SessionCoreParts,
): SessionManagerOptions {
  const { stores, observer, log, cluster, pruner, kv, oauth, stats } = parts;
  const limits = opts.limits ?? {};
  return {
    deps: {
      stores,
      runtime: observer.runtime(opts.runtime),
      secrets: opts.secrets,
      log,
      cluster,
      sdk: { kv, publicUrl: opts.publicUrl ?? (() => "http://127.0.0.1:9980"), oauth },
      ...(opts.front ? { front: opts.front } : {}),
    },
    limits: {
      workflowTimeoutMs: limits.workflowTimeoutMs ?? 10_000,
      maxActive: limits.maxActive ?? 10_000,
      slots: limits.slots,
      evictAfterMs: limits.evictAfterMs ?? 2000,
      heldWaitMs: limits.heldWaitMs,
      burstYieldMs: limits.burstYieldMs,
    },
    listeners: {
      onEnded: (record) => {
        pruner.sessionEnded(record.project_id);
        observer.sessionEnded(record);
        stats?.ended(record);
      },
      onEvent: () => pruner.eventStored(),
    },
  };
}
