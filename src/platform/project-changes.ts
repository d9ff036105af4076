import { randomUUID } from "node:crypto";
import type { Cluster } from "../cluster/cluster.ts";
import type { Readiness } from "../deploy/readiness.ts";
import type { AddressCache } from "../routes/address-cache.ts";

/**
 * A project's change (a deploy, a var): `changed` drops what this instance cached of it (where
 * its addresses lead), prepares its deployment (readiness), tells `onChanged` (the scheduler)
 * and, when instances share work, every other instance, whose receiver does the same.
 * `unsubscribe` stops the receiving.
 * @example const { changed, unsubscribe } = projectChanges({ cluster, addresses, readiness });
 */
export function projectChanges(parts: {
  cluster: Cluster;
  addresses: Pick<AddressCache, "invalidate">;
  readiness: Pick<Readiness, "project">;
  onChanged?: (projectId: string) => void;
}) {
  const { cluster, addresses, readiness, onChanged } = parts;
  const unsubscribe = cluster.bus.receive("invalidate", (m) => {
    const projectId = (m as { project_id: string }).project_id;
    addresses.invalidate(projectId);
    readiness.project(projectId);
    if (cluster.shared) onChanged?.(projectId);
  });
  const changed = (projectId: string) => {
    addresses.invalidate(projectId);
    readiness.project(projectId);
    onChanged?.(projectId);
    if (cluster.shared) {
      const id = `${projectId}:${randomUUID()}`;
      void cluster.bus.send("invalidate", { id, project_id: projectId }).catch(() => {});
    }
  };
  return { changed, unsubscribe };
}
