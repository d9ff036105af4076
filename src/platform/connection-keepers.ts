import type { Cluster } from "../cluster/cluster.ts";
import type { Logger } from "../log.ts";
import type { OAuthService } from "../oauth/index.ts";
import type { VarStoreDeps } from "../oauth/store.ts";
import { type GoogleWatchKeeper, googleWatchKeeper } from "./google-watches.ts";
import { type JiraWebhookKeeper, jiraWebhookKeeper } from "./jira-webhooks.ts";

/** What the keepers of connections' registrations at their providers work with. */
export interface KeeperParts {
  projects: VarStoreDeps;
  cluster: Cluster;
  /** The service's external base URL (`SVC_PUBLIC_URL`, else the listening address). */
  publicUrl?: () => string;
  log: Logger;
  /** The OAuth service, made after the keepers (each needs the other). */
  oauth: () => OAuthService;
}

/** A connection's access token, refreshed if it is about to expire; none when it cannot be. */
async function refreshedToken(oauth: OAuthService, projectId: string, connection: string) {
  try {
    return (await oauth.tokens.refresh(projectId, connection, false)).token;
  } catch {
    return undefined;
  }
}

/**
 * The keepers of what the service registers at providers for OAuth connections: Jira's dynamic
 * webhooks (jira-webhooks.ts) and Google Calendar and Drive watch channels (google-watches.ts),
 * each with tokens the OAuth refresher keeps fresh. `changed` tells both of a project's change;
 * `authorized` is the OAuth flow's `onAuthorized` listener.
 * @example const keepers = connectionKeepers({ projects, cluster, publicUrl, log, oauth: () => oauth });
 */
export function connectionKeepers(p: KeeperParts) {
  const { projects, cluster, publicUrl, log } = p;
  const accessToken = (projectId: string, c: string) => refreshedToken(p.oauth(), projectId, c);
  const jiraWebhooks: JiraWebhookKeeper = jiraWebhookKeeper({
    projects,
    cluster,
    publicUrl,
    log,
    // Atlassian's tokens live an hour: a renewal weeks later takes a refreshed one (else the stored one).
    atlassian: {
      accessToken,
      removedToken: (projectId, c) => p.oauth().tokens.forRemoved(projectId, c, "jira"),
    },
  });
  const googleWatches: GoogleWatchKeeper = googleWatchKeeper({
    projects,
    cluster,
    publicUrl,
    log,
    google: {
      accessToken,
      removedToken: (projectId, c, kind) => p.oauth().tokens.forRemoved(projectId, c, kind),
    },
  });
  return {
    jiraWebhooks,
    googleWatches,
    changed(projectId: string) {
      jiraWebhooks.changed(projectId);
      googleWatches.changed(projectId);
    },
    /** An authorized jira connection gets its webhook, a Calendar or Drive one its channel, at once. */
    async authorized(a: { projectId: string; connection: string; integration: string }) {
      if (a.integration === "jira") await jiraWebhooks.ensure(a.projectId, a.connection);
      if (a.integration === "googlecalendar" || a.integration === "googledrive") {
        await googleWatches.ensure(a.projectId, a.connection);
      }
    },
    start() {
      jiraWebhooks.start();
      googleWatches.start();
    },
    async dispose() {
      await jiraWebhooks.dispose();
      await googleWatches.dispose();
    },
  };
}

export type ConnectionKeepers = ReturnType<typeof connectionKeepers>;
