import { createHash } from "node:crypto";
import { type Clock, isoNow, systemClock } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { connectionVars } from "../connections/index.ts";
import {
  ensureJiraWebhook,
  type JiraWebhookInput,
  type JiraWebhookResult,
} from "../connections/jira-webhooks.ts";
import { serialQueue } from "../locks.ts";
import type { Logger } from "../log.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import type { VarStoreDeps } from "../oauth/store.ts";
import { removeOrphanWebhooks } from "./jira-webhook-removal.ts";

/** How often the fleet looks for webhooks near their expiry (one instance a slot). */
export const SWEEP_MS = 3600_000;
/** Connections a sweep looks at, at most; the rest wait for the next one. */
const SWEEP_MAX = 500;
/** How long one instance's claim on a connection's state holds the others off. */
const CLAIM_MS = 5 * 60_000;

/** What the keeper reads and writes projects with: the API's own, as the OAuth side's. */
export type KeeperProjects = VarStoreDeps;

export interface JiraKeeperDeps {
  projects: KeeperProjects;
  cluster: Pick<Cluster, "once">;
  /** The service's external base URL (`SVC_PUBLIC_URL`, else the listening address); none: nothing registers. */
  publicUrl?: () => string;
  log: Logger;
  clock?: Clock;
  /**
   * Atlassian's API and fetch (default: `atlassianApiUrl()`, `fetch`), and where a fresh access
   * token comes from: the OAuth refresher, e.g. `async (p, c) => (await
   * oauth.tokens.refresh(p, c, false)).token` (Atlassian's tokens live an hour: a renewal two
   * weeks on needs a refreshed one). Default: the `oauth_AccessToken` var as stored.
   */
  atlassian?: Pick<JiraWebhookInput, "apiUrl" | "fetch"> & {
    accessToken?: (projectId: string, connection: string) => Promise<string | undefined>;
    /**
     * The same for a connection the project no longer has, whose webhook is to be deleted
     * (`oauth.tokens.forRemoved(p, c, "jira")`). Default: the stored `oauth_AccessToken`.
     */
    removedToken?: (projectId: string, connection: string) => Promise<string | undefined>;
  };
}

/** The Jira webhooks of OAuth connections, registered and kept alive. */
export interface JiraWebhookKeeper {
  /**
   * Registers or renews one jira connection's dynamic webhook and saves its vars
   * (`WebhookID`, `WebhookExpiration`, …); for the OAuth flow's `onAuthorized` hook, after it
   * saved the connection's tokens. Resolves with what was done; never rejects.
   */
  ensure(projectId: string, connection: string): Promise<JiraWebhookResult>;
  /** A project changed (deploy, var): its jira connections are looked at, in the background. */
  changed(projectId: string): void;
  /** Sweeps now, then every hour (one instance of the fleet a slot). */
  start(): void;
  /** Waits for the work under way (tests, shutdown). */
  idle(): Promise<void>;
  /** Stops the sweeps and what changes would start; resolves once the work under way is done. */
  dispose(): Promise<void>;
}

const NO_CONNECTION: JiraWebhookResult = {
  action: "skipped",
  detail: "no such connection",
  set: {},
};

const isJira = (c: ConnectionRecord) => c.integration === "jira" && c.inbound_id !== "";

/** One claim key per connection and state: instances told of the same change act once. */
function claimKey(conn: ConnectionRecord, input: JiraWebhookInput): string {
  const names = ["oauth_AccessToken", "AccessID", "WebhookID", "WebhookExpiration"];
  const hash = createHash("sha256");
  for (const n of names) hash.update(`${input.vars(n) ?? ""}\n`);
  hash.update(`${input.accessToken ?? ""}\n${input.inboundUrl}`);
  return `jira-webhook:${conn.id}:${hash.digest("hex").slice(0, 32)}`;
}

/** Saves a result's vars as the connection's (plain, kept across redeploys), then says so. */
async function saveVars(
  p: KeeperProjects,
  doc: ProjectDoc,
  conn: { name: string; at: string },
  set: Record<string, string>,
) {
  const { name, at } = conn;
  await p.locks.run(`project:${doc.project.name}`, async () => {
    const fresh = await p.stores.projects.get(doc.project.id);
    if (!fresh) return;
    const recs = Object.entries(set).map(([short, value]) => ({
      env_id: fresh.env.id,
      name: `${name}__${short}`,
      value,
      secret: false,
      source: "cli" as const,
      updated_at: at,
    }));
    const replaced = new Set(recs.map((r) => r.name));
    fresh.vars = [...fresh.vars.filter((v) => !replaced.has(v.name)), ...recs];
    await p.stores.projects.put(fresh);
  });
  p.changed(doc.project.id);
}

/** One connection looked at: registered or renewed if it must be, its vars saved. */
async function ensureOne(
  deps: JiraKeeperDeps & { clock: Clock },
  doc: ProjectDoc,
  conn: ConnectionRecord,
): Promise<JiraWebhookResult> {
  const { projects, cluster, log, clock } = deps;
  const base = deps.publicUrl?.();
  const where = `jira connection ${doc.project.name}/${conn.name}`;
  if (!base) return { action: "skipped", detail: "no service URL", set: {} };
  const vars = connectionVars(doc, conn.name, (s) => projects.secrets.open(s));
  if (!vars("oauth_AccessToken")) {
    return { action: "skipped", detail: "no OAuth token (oauth_AccessToken)", set: {} };
  }
  const input: JiraWebhookInput = {
    vars,
    inboundUrl: `${base.replace(/\/+$/, "")}/inbound/${conn.inbound_id}`,
    now: clock.now(),
    apiUrl: deps.atlassian?.apiUrl,
    fetch: deps.atlassian?.fetch,
    accessToken: await deps.atlassian?.accessToken?.(doc.project.id, conn.name),
  };
  if (!(await cluster.once(claimKey(conn, input), CLAIM_MS))) {
    return { action: "kept", detail: "another instance is at it", set: {} };
  }
  const result = await ensureJiraWebhook(input);
  if (Object.keys(result.set).length) {
    await saveVars(projects, doc, { name: conn.name, at: isoNow(clock) }, result.set);
  }
  if (result.action === "failed") log.warn(`${where}: webhook not registered: ${result.detail}`);
  else if (result.action !== "kept") log.info(`${where}: ${result.detail}`);
  return result;
}

/** The hour's sweep, if this instance claims it: every jira connection, SWEEP_MAX at most. */
async function sweepAll(
  deps: JiraKeeperDeps & { clock: Clock },
  one: (doc: ProjectDoc, conn: ConnectionRecord) => Promise<unknown>,
): Promise<void> {
  const slot = Math.floor(deps.clock.now() / SWEEP_MS);
  if (!(await deps.cluster.once(`jira-webhooks:sweep:${slot}`, SWEEP_MS))) return;
  let looked = 0;
  for (const doc of await deps.projects.stores.projects.list()) {
    await removeOrphans(deps, doc);
    for (const conn of (doc.connections ?? []).filter(isJira)) {
      if (++looked > SWEEP_MAX) return;
      await one(doc, conn);
    }
  }
}

/** The webhooks of the project's removed jira connections deleted at Jira; never throws. */
function removeOrphans(deps: JiraKeeperDeps & { clock: Clock }, doc: ProjectDoc) {
  return removeOrphanWebhooks(deps, doc).catch((e: unknown) => {
    deps.log.warn(`jira webhooks of ${doc.project.name}: removal not done: ${String(e)}`);
  });
}

/**
 * The keeper of the jira connections' dynamic webhooks (src/connections/jira-webhooks.ts): a
 * project's change (a deploy, the OAuth tokens saved, a var set) and an hourly sweep register
 * a missing webhook and refresh one within 14 days of its expiry, and delete at Jira the webhook
 * of a jira connection the project no longer has (jira-webhook-removal.ts); `ensure` does one connection
 * at once. Work is serialised on this instance and claimed across the fleet, so one instance
 * calls Atlassian for each state of a connection.
 * @example const keeper = jiraWebhookKeeper({ projects, cluster, publicUrl, log }); keeper.start();
 */
export function jiraWebhookKeeper(deps: JiraKeeperDeps): JiraWebhookKeeper {
  const { projects, log } = deps;
  const clock = deps.clock ?? systemClock;
  const withClock = { ...deps, clock };
  // A connection that throws (no fresh token: the refresher said why; storage) spoils no other.
  const tryOne = (doc: ProjectDoc, conn: ConnectionRecord) =>
    ensureOne(withClock, doc, conn).catch((e: unknown): JiraWebhookResult => {
      const detail = (e as Error).message;
      log.warn(
        `jira connection ${doc.project.name}/${conn.name}: webhook not looked at: ${detail}`,
      );
      return { action: "failed", detail, set: {} };
    });
  let timer: unknown = null;
  let disposed = false;
  const queue = serialQueue((e: unknown) => log.error("jira webhooks", e));
  const serial = queue.run;

  async function ensureProject(projectId: string, only?: string): Promise<JiraWebhookResult[]> {
    const doc = await projects.stores.projects.get(projectId);
    if (doc && !only) await removeOrphans(withClock, doc);
    const conns = (doc?.connections ?? []).filter((c) => isJira(c) && (!only || c.name === only));
    const results: JiraWebhookResult[] = [];
    for (const conn of conns) results.push(await tryOne(doc!, conn));
    return results;
  }

  const sweep = () => sweepAll(withClock, tryOne);

  const arm = () => {
    if (disposed) return;
    timer = clock.setTimeout(() => {
      void serial(sweep)
        .catch(() => {})
        .finally(arm);
    }, SWEEP_MS);
  };

  return {
    ensure: (projectId, connection) =>
      serial(async () => {
        const [result] = await ensureProject(projectId, connection);
        return result ?? NO_CONNECTION;
      }).catch(
        (e: unknown): JiraWebhookResult => ({ action: "failed", detail: String(e), set: {} }),
      ),
    changed(projectId) {
      if (!disposed) void serial(() => ensureProject(projectId)).catch(() => {});
    },
    start() {
      void serial(sweep)
        .catch(() => {})
        .finally(arm);
    },
    idle: () => queue.idle(),
    async dispose() {
      disposed = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      await this.idle();
    },
  };
}
