import type { Clock } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { connectionVars } from "../connections/index.ts";
import { deleteJiraWebhook } from "../connections/jira-webhooks.ts";
import type { Logger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import type { VarStoreDeps } from "../oauth/store.ts";

/** The vars of a registered webhook, cleared once it is deleted (or its deletion failed). */
const WEBHOOK_VARS = ["WebhookID", "WebhookExpiration", "WebhookKey"];
/** How long one instance's claim on a deletion holds the others off. */
const CLAIM_MS = 5 * 60_000;

/** What a removal reads and calls with: the keeper's projects, claims, log and Atlassian. */
export interface RemovalDeps {
  projects: VarStoreDeps;
  cluster: Pick<Cluster, "once">;
  log: Logger;
  clock: Clock;
  atlassian?: {
    apiUrl?: string | undefined;
    fetch?: typeof fetch | undefined;
    /** A fresh token for a removed connection (the OAuth refresher's `forRemoved`). */
    removedToken?: (projectId: string, connection: string) => Promise<string | undefined>;
  };
}

/**
 * The names whose vars hold a webhook the service registered (`<name>__WebhookID` beside an
 * OAuth token) but that no longer name a jira connection of the project with an inbound path:
 * the connection was removed (or is no longer jira's) while its `cli`-set vars stayed.
 * @example orphanWebhooks(doc) // ["old_jira"]
 */
export function orphanWebhooks(doc: ProjectDoc): string[] {
  const live = new Set(
    (doc.connections ?? [])
      .filter((c) => c.integration === "jira" && c.inbound_id !== "")
      .map((c) => c.name),
  );
  const has = new Set(doc.vars.filter((v) => v.value !== "").map((v) => v.name));
  return doc.vars
    .map((v) => /^(.+)__WebhookID$/.exec(v.name)?.[1])
    .filter((n): n is string => n !== undefined && !live.has(n))
    .filter((n) => has.has(`${n}__WebhookID`) && has.has(`${n}__oauth_AccessToken`));
}

/**
 * Deletes at Atlassian the webhook of each jira connection a project no longer has, then clears
 * its webhook vars: a deletion that fails is logged (the webhook is left for the user to delete
 * at Jira) and changes nothing else. Claimed across the fleet, so one instance calls Atlassian.
 * @example await removeOrphanWebhooks(deps, doc);
 */
export async function removeOrphanWebhooks(d: RemovalDeps, doc: ProjectDoc): Promise<void> {
  for (const name of orphanWebhooks(doc)) {
    const vars = connectionVars(doc, name, (s) => d.projects.secrets.open(s));
    const id = vars("WebhookID")!;
    if (!(await d.cluster.once(`jira-webhook-delete:${doc.project.id}:${name}:${id}`, CLAIM_MS))) {
      continue;
    }
    const where = `jira connection ${doc.project.name}/${name} (removed)`;
    const problem = await deleteJiraWebhook({
      vars,
      inboundUrl: "",
      now: d.clock.now(),
      apiUrl: d.atlassian?.apiUrl,
      fetch: d.atlassian?.fetch,
      // Atlassian's tokens live an hour: the stored one has likely expired; else it is tried.
      accessToken: await d.atlassian?.removedToken?.(doc.project.id, name).catch(() => undefined),
    });
    if (problem) {
      d.log.warn(`${where}: webhook ${id} not deleted at Jira (${problem}): delete it there`);
    } else d.log.info(`${where}: webhook ${id} deleted at Jira`);
    await clearVars(d.projects, doc, name);
  }
}

/** Removes a name's webhook vars from the project as stored now, then says it changed. */
async function clearVars(p: VarStoreDeps, doc: ProjectDoc, name: string): Promise<void> {
  const gone = new Set(WEBHOOK_VARS.map((v) => `${name}__${v}`));
  await p.locks.run(`project:${doc.project.name}`, async () => {
    const fresh = await p.stores.projects.get(doc.project.id);
    if (!fresh) return;
    fresh.vars = fresh.vars.filter((v) => !gone.has(v.name));
    await p.stores.projects.put(fresh);
  });
  p.changed(doc.project.id);
}
