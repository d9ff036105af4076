import type { ProjectDoc, TriggerRecord } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";

export interface ResolvedWebhook {
  doc: ProjectDoc;
  trigger: TriggerRecord;
  deploymentId: string;
  buildId: string;
}

/** Webhook id → what it runs, read from storage on a miss. */
export interface TriggerCache {
  /** The trigger and active deployment of a webhook id, or null (unknown id, nothing active). */
  get(webhookId: string): Promise<ResolvedWebhook | null>;
  /** Drops what is known of a project, and every cached miss (a new trigger may fill one). */
  invalidate(projectId: string): void;
}

/** Entries kept; the oldest goes first past it. */
const MAX_ENTRIES = 10_000;
/** How long an unknown id stays known as unknown. */
const MISS_TTL_MS = 1000;

/**
 * Webhook id → trigger and active deployment, so the webhook path reads storage only on a miss.
 * Deploys and var changes call `invalidate(projectId)`. Misses (unknown ids) are cached too, for
 * a short while, so a flood of bad ids cannot turn into a flood of reads. `ttlMs` 0 keeps hits
 * until invalidated (one instance: every change passes through it); between instances a change
 * made elsewhere shows after `ttlMs`. `now` is the clock (tests pass their own).
 * @example const triggers = createTriggerCache(stores, 5000); await triggers.get(webhookId);
 */
export function createTriggerCache(
  stores: Stores,
  ttlMs = 0,
  now: () => number = Date.now,
): TriggerCache {
  const entries = new Map<string, { value: ResolvedWebhook | null; at: number }>();

  async function load(webhookId: string): Promise<ResolvedWebhook | null> {
    const ref = await stores.webhooks.get(webhookId);
    if (!ref) return null;
    const doc = await stores.projects.get(ref.project_id);
    const trigger = doc?.triggers.find((t) => t.id === ref.trigger_id);
    const deploymentId = doc?.project.active_deployment_id;
    if (!doc || !trigger || !deploymentId) return null;
    const deployment = await stores.deployments.get(deploymentId);
    if (!deployment) return null;
    return { doc, trigger, deploymentId, buildId: deployment.build_id };
  }

  return {
    async get(webhookId: string): Promise<ResolvedWebhook | null> {
      const hit = entries.get(webhookId);
      const at = now();
      if (hit) {
        const ttl = hit.value ? ttlMs : MISS_TTL_MS;
        if (ttl === 0 || at - hit.at < ttl) return hit.value;
      }
      const value = await load(webhookId);
      entries.delete(webhookId); // a refreshed entry moves to the back of the eviction order
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(webhookId, { value, at });
      return value;
    },
    invalidate(projectId: string) {
      for (const [id, e] of entries) {
        if (!e.value || e.value.doc.project.id === projectId) entries.delete(id);
      }
    },
  };
}
