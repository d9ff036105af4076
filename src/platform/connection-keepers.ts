import type { Cluster } from "../cluster/cluster.ts";
import { GOOGLE_JWKS_URL, googleKeys } from "../connections/google-oidc.ts";
import type { Logger } from "../log.ts";
import type { OAuthService } from "../oauth/index.ts";
import type { VarStoreDeps } from "../oauth/store.ts";
import type { PubsubReads, PubsubRouteDeps } from "../routes/google-pubsub.ts";
import type { Delivery } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";
import { type HookKeeper, hookKeeper } from "./connection-webhooks.ts";
import { type DiscordGateways, discordGateways } from "./discord-gateways.ts";
import { type GoogleWatchKeeper, googleWatchKeeper } from "./google-watches.ts";
import { type JiraWebhookKeeper, jiraWebhookKeeper } from "./jira-webhooks.ts";
import { type PubsubKeeper, pubsubKeeper } from "./pubsub-keeper.ts";

/** What the keepers of connections' registrations at their providers work with. */
export interface KeeperParts {
  projects: VarStoreDeps;
  cluster: Cluster;
  /** The service's external base URL (`SVC_PUBLIC_URL`, else the listening address). */
  publicUrl?: () => string;
  log: Logger;
  /** The OAuth service, made after the keepers (each needs the other). */
  oauth: () => OAuthService;
  /** Discord's gateway events in (the sessions, made after the keepers), and the deployments. */
  discord: { ingest: (d: Delivery) => Promise<unknown>; stores: Pick<Stores, "deployments"> };
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
 * The keepers of what the service registers at providers for connections: Jira's dynamic
 * webhooks (jira-webhooks.ts), Google Calendar and Drive watch channels (google-watches.ts) and
 * Gmail and Forms watches (pubsub-keeper.ts), each with tokens the OAuth refresher keeps fresh;
 * Confluence's and Telegram's webhooks (connection-webhooks.ts); Discord bots' gateways
 * (discord-gateways.ts). `changed` tells each of a project's change; `authorized` is the OAuth
 * flow's `onAuthorized` listener.
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
  const google = {
    accessToken,
    removedToken: (projectId: string, c: string, kind: string) =>
      p.oauth().tokens.forRemoved(projectId, c, kind),
  };
  const withGoogle = { projects, cluster, publicUrl, log, google };
  const googleWatches: GoogleWatchKeeper = googleWatchKeeper(withGoogle);
  const pubsub: PubsubKeeper = pubsubKeeper({ projects, cluster, log, google }, pubsubTopics());
  const hooks: HookKeeper = hookKeeper({ projects, cluster, publicUrl, log });
  const stores = { ...p.discord.stores, projects: projects.stores.projects };
  const secrets = projects.secrets;
  const discord: DiscordGateways = discordGateways({ ...p.discord, stores, cluster, log, secrets });
  return {
    jiraWebhooks,
    googleWatches,
    pubsub,
    hooks,
    discord,
    changed(projectId: string) {
      jiraWebhooks.changed(projectId);
      googleWatches.changed(projectId);
      pubsub.changed(projectId);
      hooks.changed(projectId);
      discord.changed(projectId);
    },
    /**
     * An authorized jira (or confluence) connection gets its webhooks, a Calendar or Drive one its
     * channel, at once.
     */
    async authorized(a: { projectId: string; connection: string; integration: string }) {
      if (a.integration === "jira") await jiraWebhooks.ensure(a.projectId, a.connection);
      else if (a.integration === "confluence") await hooks.ensure(a.projectId, a.connection);
      else if (a.integration === "googlecalendar" || a.integration === "googledrive") {
        await googleWatches.ensure(a.projectId, a.connection);
      } else if (a.integration === "gmail" || a.integration === "googleforms") {
        await pubsub.ensure(a.projectId, a.connection);
      }
    },
    start() {
      jiraWebhooks.start();
      googleWatches.start();
      pubsub.start();
      hooks.start();
      discord.start();
    },
    async dispose() {
      await Promise.all([
        jiraWebhooks.dispose(),
        googleWatches.dispose(),
        pubsub.dispose(),
        hooks.dispose(),
        discord.dispose(),
      ]);
    },
  };
}

/** The Pub/Sub topics Gmail's and Forms' watches publish to (AutoKitteh's names work too). */
export function pubsubTopics(env: Record<string, string | undefined> = process.env) {
  return {
    gmail: env.SVC_GMAIL_PUBSUB_TOPIC || env.GMAIL_PUBSUB_TOPIC || undefined,
    googleforms: env.SVC_GOOGLE_FORMS_PUBSUB_TOPIC || env.GOOGLE_FORMS_PUBSUB_TOPIC || undefined,
  };
}

/**
 * What the Pub/Sub push routes need of the keepers and the settings: Google's keys
 * (`SVC_GOOGLE_JWKS_URL`), the audience and service account the tokens must name.
 * @example const pubsub = pubsubRouteParts(keepers);
 */
export function pubsubRouteParts(
  keepers: { pubsub: PubsubKeeper },
  env: Record<string, string | undefined> = process.env,
): Pick<PubsubRouteDeps, "verify" | "read"> {
  const verify = {
    keys: googleKeys(env.SVC_GOOGLE_JWKS_URL || GOOGLE_JWKS_URL),
    audience: env.SVC_GOOGLE_PUBSUB_AUDIENCE || undefined,
    serviceAccount: env.SVC_GOOGLE_PUBSUB_SERVICE_ACCOUNT || undefined,
  };
  const read: PubsubReads = {
    targets: (kind, m) => keepers.pubsub.targets(kind, m),
    pull: (t, m) => keepers.pubsub.pull(t, m),
  };
  return { verify, read };
}

export type ConnectionKeepers = ReturnType<typeof connectionKeepers>;
