import { createHash } from "node:crypto";
import type { Cluster } from "../cluster/cluster.ts";
import {
  CONFLUENCE_HOOK_VARS,
  deleteConfluenceWebhooks,
  ensureConfluenceWebhooks,
  type HookInput,
  type HookResult,
} from "../connections/confluence-webhooks.ts";
import {
  deleteTelegramWebhook,
  ensureTelegramWebhook,
  TELEGRAM_HOOK_VARS,
} from "../connections/telegram-webhooks.ts";
import { serialQueue } from "../locks.ts";
import type { Logger } from "../log.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import { connectionVarStore, type VarStoreDeps } from "../oauth/store.ts";

/** One integration whose webhook the service registers at the provider with the connection's credentials. */
interface HookKind {
  /** The provider's name, for the log. */
  provider: string;
  ensure(input: HookInput): Promise<HookResult>;
  remove(input: HookInput): Promise<string | null>;
  /** The vars a registration leaves; the first marks a registration a removed connection left. */
  vars: string[];
}

const KINDS: Record<string, HookKind> = {
  confluence: {
    provider: "Confluence",
    ensure: ensureConfluenceWebhooks,
    remove: deleteConfluenceWebhooks,
    vars: CONFLUENCE_HOOK_VARS,
  },
  telegram: {
    provider: "Telegram",
    ensure: ensureTelegramWebhook,
    remove: deleteTelegramWebhook,
    vars: TELEGRAM_HOOK_VARS,
  },
};

/** How long one instance's claim on a connection's state holds the others off. */
const CLAIM_MS = 5 * 60_000;

export interface HookKeeperDeps {
  projects: VarStoreDeps;
  cluster: Pick<Cluster, "once">;
  /** The service's external base URL (`SVC_PUBLIC_URL`, else the listening address). */
  publicUrl?: () => string;
  log: Logger;
  fetch?: typeof fetch;
}

/** The Confluence and Telegram webhooks of connections, registered and deleted as they come and go. */
export interface HookKeeper {
  /** A project changed (deploy, var set, tokens saved): its connections are looked at, in the background. */
  changed(projectId: string): void;
  /** One connection at once (after an authorization); resolves with what was done. */
  ensure(projectId: string, connection: string): Promise<HookResult | null>;
  /** Every project looked at once (at the start). */
  start(): void;
  idle(): Promise<void>;
  dispose(): Promise<void>;
}

const kindOf = (c: ConnectionRecord) => (c.inbound_id ? KINDS[c.integration] : undefined);

/** The vars a registration is made with: a change of any of them is a new state to act on. */
const CREDENTIALS = "BotToken Token APIKeyOrPAT Email BaseURL base_url oauth_AccessToken".split(
  " ",
);

/** A claim key per connection and state: instances told of the same change act once. */
function claimKey(what: string, doc: ProjectDoc, name: string, input: HookInput, kind: HookKind) {
  const hash = createHash("sha256").update(input.inboundUrl);
  for (const n of [...CREDENTIALS, ...kind.vars]) hash.update(`\n${input.vars(n) ?? ""}`);
  return `${what}:${doc.project.id}:${name}:${hash.digest("hex").slice(0, 32)}`;
}

/** What the keeper's pieces share: its deps and the vars store over its projects. */
type Ctx = HookKeeperDeps & { store: ReturnType<typeof connectionVarStore> };

/** One connection looked at: registered if it must be, its vars saved. */
async function ensureOne(
  ctx: Ctx,
  doc: ProjectDoc,
  conn: ConnectionRecord,
): Promise<HookResult | null> {
  const { store, cluster, log } = ctx;
  const kind = kindOf(conn);
  const base = ctx.publicUrl?.();
  if (!kind || !base) return null;
  const where = `${conn.integration} connection ${doc.project.name}/${conn.name}`;
  const inboundUrl = `${base.replace(/\/+$/, "")}/inbound/${conn.inbound_id}`;
  const input = { vars: store.vars({ doc, conn }), inboundUrl, fetch: ctx.fetch };
  if (!(await cluster.once(claimKey("hook", doc, conn.name, input, kind), CLAIM_MS))) return null;
  const result = await kind.ensure(input);
  const writes = Object.entries(result.set).map(([name, value]) => {
    return { name, value, secret: result.secret.includes(name) };
  });
  if (writes.length) await store.write(doc.project.id, conn.name, writes, []);
  if (result.action === "failed") log.warn(`${where}: webhook not registered: ${result.detail}`);
  else if (result.action === "registered") log.info(`${where}: ${result.detail}`);
  return result;
}

/** The names whose vars hold a registration of `kind` but no longer name such a connection. */
function leftBehind(doc: ProjectDoc, kind: HookKind): string[] {
  const live = new Set(
    (doc.connections ?? []).filter((c) => kindOf(c) === kind).map((c) => c.name),
  );
  const marker = `__${kind.vars[0]}`;
  return doc.vars
    .filter((v) => v.name.endsWith(marker) && v.value !== "")
    .map((v) => v.name.slice(0, -marker.length))
    .filter((n) => !live.has(n));
}

/** The webhooks of the project's removed connections deleted at the provider, their vars cleared. */
async function removeLeft(ctx: Ctx, doc: ProjectDoc): Promise<void> {
  const { store, cluster, log } = ctx;
  for (const [integration, kind] of Object.entries(KINDS)) {
    for (const name of leftBehind(doc, kind)) {
      // Its vars as the project holds them, also when the name is now another integration's.
      const conn = { name } as ConnectionRecord;
      const input = { vars: store.vars({ doc, conn }), inboundUrl: "", fetch: ctx.fetch };
      if (!(await cluster.once(claimKey("unhook", doc, name, input, kind), CLAIM_MS))) continue;
      const where = `${integration} connection ${doc.project.name}/${name} (removed)`;
      const problem = await kind.remove(input);
      if (problem) {
        log.warn(`${where}: webhook not deleted at ${kind.provider} (${problem}): delete it there`);
      } else log.info(`${where}: webhook deleted at ${kind.provider}`);
      await store.write(doc.project.id, name, [], kind.vars);
    }
  }
}

/** A project looked at: what it left removed (unless `only`), then its connections (or `only`). */
async function lookAt(ctx: Ctx, projectId: string, only?: string) {
  const doc = await ctx.projects.stores.projects.get(projectId);
  if (!doc) return null;
  if (!only) await removeLeft(ctx, doc);
  let last: HookResult | null = null;
  for (const conn of doc.connections ?? []) {
    if (only && conn.name !== only) continue;
    last = await ensureOne(ctx, doc, conn).catch((e: unknown): HookResult => {
      const where = `${conn.integration} connection ${doc.project.name}/${conn.name}`;
      ctx.log.warn(`${where}: webhook not looked at: ${String(e)}`);
      return { action: "failed", detail: String(e), set: {}, secret: [] };
    });
  }
  return last;
}

/**
 * The keeper of the webhooks the service registers for confluence connections (at the site,
 * with its API token: src/connections/confluence-webhooks.ts) and telegram connections
 * (`setWebhook` with a random secret token: telegram-webhooks.ts): a project's change registers
 * what a connection with credentials lacks and deletes at the provider what a connection the
 * project no longer has left (its vars stay, as every connection's), then clears those vars.
 * Serialised here, claimed across the fleet.
 * @example const keeper = hookKeeper({ projects, cluster, publicUrl, log }); keeper.changed(projectId);
 */
export function hookKeeper(deps: HookKeeperDeps): HookKeeper {
  const ctx: Ctx = { ...deps, store: connectionVarStore(deps.projects) };
  let disposed = false;
  const queue = serialQueue((e: unknown) => deps.log.error("connection webhooks", e));
  const serial = queue.run;
  return {
    changed(projectId) {
      if (!disposed) void serial(() => lookAt(ctx, projectId)).catch(() => {});
    },
    ensure: (projectId, connection) =>
      serial(() => lookAt(ctx, projectId, connection)).catch(() => null),
    start() {
      void serial(async () => {
        for (const doc of await deps.projects.stores.projects.list()) {
          await lookAt(ctx, doc.project.id);
        }
      }).catch(() => {});
    },
    idle: () => queue.idle(),
    async dispose() {
      disposed = true;
      await this.idle();
    },
  };
}
