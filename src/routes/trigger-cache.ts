import type { ProjectDoc, TriggerRecord } from "../model/records.ts";
import type { Stores } from "../storage/stores.ts";

export interface ResolvedWebhook {
  doc: ProjectDoc;
  trigger: TriggerRecord;
  deploymentId: string;
  buildId: string;
}

/** Entries kept; the oldest goes first past it. */
const MAX_ENTRIES = 10_000;

/**
 * Webhook id → trigger and active deployment, so the webhook path reads storage only on a miss.
 * Deploys and var changes call `invalidate(projectId)`. Misses (unknown ids) are cached too, for
 * a short while, so a flood of bad ids cannot turn into a flood of reads.
 */
export function createTriggerCache(stores: Stores, ttlMs = 0) {
  const entries = new Map<string, { value: ResolvedWebhook | null; at: number }>();
  const MISS_TTL = 1000;

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
      const now = Date.now();
      if (hit) {
        const ttl = hit.value ? ttlMs : MISS_TTL;
        if (ttl === 0 || now - hit.at < ttl) return hit.value;
      }
      const value = await load(webhookId);
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(webhookId, { value, at: now });
      return value;
    },
    /** Drops what is known of a project, and every cached miss (a new trigger may fill one). */
    invalidate(projectId: string) {
      for (const [id, e] of entries) {
        if (!e.value || e.value.doc.project.id === projectId) entries.delete(id);
      }
    },
  };
}

export type TriggerCache = ReturnType<typeof createTriggerCache>;
