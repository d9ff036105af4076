import type { ConnectionRecord, ProjectDoc, TriggerRecord } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";

/**
 * What an address (a webhook id, a connection's inbound id) reaches: its project, the
 * deployment that runs now, and the trigger or the connection it names (the other is null).
 */
export interface ResolvedAddress {
  doc: ProjectDoc;
  deploymentId: string;
  buildId: string;
  /** The trigger of a webhook id (`/webhooks/<id>`). */
  trigger: TriggerRecord | null;
  /** The connection of an inbound id (`/inbound/<id>`). */
  connection: ConnectionRecord | null;
}

/** Address → what it runs, read from storage on a miss. */
export interface AddressCache {
  /** What an id reaches, or null (unknown id, nothing active). */
  get(id: string): Promise<ResolvedAddress | null>;
  /** Drops what is known of a project, and every cached miss (a new address may fill one). */
  invalidate(projectId: string): void;
}

/** Entries kept; the oldest goes first past it. */
const MAX_ENTRIES = 10_000;
/** How long an unknown id stays known as unknown. */
const MISS_TTL_MS = 1000;

/**
 * Webhook and inbound ids → trigger or connection and active deployment, so that a delivery
 * reads storage only on a miss. Deploys and var changes call `invalidate(projectId)`. Misses
 * (unknown ids) are cached too, for a short while, so a flood of bad ids cannot turn into a
 * flood of reads. `ttlMs` 0 keeps hits until invalidated (one instance: every change passes
 * through it); between instances a change made elsewhere shows after `ttlMs` at the latest.
 * `now` is the clock (tests pass their own).
 * @example const addresses = createAddressCache(stores, 5000); (await addresses.get(webhookId))?.trigger;
 */
export function createAddressCache(
  stores: Stores,
  ttlMs = 0,
  now: () => number = Date.now,
): AddressCache {
  const entries = new Map<string, { value: ResolvedAddress | null; at: number }>();

  async function load(id: string): Promise<ResolvedAddress | null> {
    const ref = await stores.webhooks.get(id);
    if (!ref) return null;
    const doc = await stores.projects.get(ref.project_id);
    const deploymentId = doc?.project.active_deployment_id;
    if (!doc || !deploymentId) return null;
    const trigger = ref.connection ? null : doc.triggers.find((t) => t.id === ref.trigger_id);
    const connection = ref.connection
      ? doc.connections?.find((c) => c.name === ref.connection && c.inbound_id === id)
      : null;
    if (!trigger && !connection) return null;
    const deployment = await stores.deployments.get(deploymentId);
    if (!deployment) return null;
    const target = { trigger: trigger ?? null, connection: connection ?? null };
    return { doc, deploymentId, buildId: deployment.build_id, ...target };
  }

  return {
    async get(id: string): Promise<ResolvedAddress | null> {
      const hit = entries.get(id);
      const at = now();
      if (hit) {
        const ttl = hit.value ? ttlMs : MISS_TTL_MS;
        if (ttl === 0 || at - hit.at < ttl) return hit.value;
      }
      const value = await load(id);
      entries.delete(id); // a refreshed entry moves to the back of the eviction order
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(id, { value, at });
      return value;
    },
    invalidate(projectId: string) {
      for (const [id, e] of entries) {
        if (!e.value || e.value.doc.project.id === projectId) entries.delete(id);
      }
    },
  };
}
