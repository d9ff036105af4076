import { createHash } from "node:crypto";
import type { Cluster } from "../cluster/cluster.ts";
import { discordEvent } from "../connections/discord-events.ts";
import { DISCORD_API_URL, DiscordGateway, gatewayUrl } from "../connections/discord-gateway.ts";
import { connectionVars } from "../connections/index.ts";
import { serialQueue } from "../locks.ts";
import type { Logger } from "../log.ts";
import type { ConnectionData, ProjectDoc } from "../model/records.ts";
import type { SecretBox } from "../secrets.ts";
import type { Delivery } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";

/** How often, on a fleet, the bots are looked at again without being told of a change. */
const RELOOK_MS = 60_000;

export interface DiscordKeeperDeps {
  stores: Pick<Stores, "projects" | "deployments">;
  secrets: SecretBox;
  /** `hold` decides which instance of a fleet opens a bot's gateway (absent or alone: this one). */
  cluster: Pick<Cluster, "hold" | "letGo" | "leaseMs" | "shared">;
  /** A connection's events in, as an inbound delivery's (`sessions.prepare(d).run()`). */
  ingest: (delivery: Delivery) => Promise<unknown>;
  log: Logger;
  fetch?: typeof fetch;
}

/** One connection a bot's events go to. */
interface Target {
  projectId: string;
  connection: string;
  /** The connection's `BotID`, if set: the bot's own events are not its events. */
  botId: string;
}

/** What a bot's gateway is opened with: its token and the REST base its URL is read from. */
interface BotSpec {
  token: string;
  api: string;
  targets: Target[];
}

/** The bots the projects' discord connections name, by a hash of token and REST base. */
async function wantedBots(deps: DiscordKeeperDeps): Promise<Map<string, BotSpec>> {
  const bots = new Map<string, BotSpec>();
  const open = (sealed: string) => deps.secrets.open(sealed);
  for (const doc of await deps.stores.projects.list()) {
    if (!doc.project.active_deployment_id) continue;
    for (const conn of doc.connections ?? []) {
      if (conn.integration !== "discord") continue;
      const vars = connectionVars(doc, conn.name, open);
      const token = vars("BotToken");
      if (!token) continue;
      const api = (vars("base_url") ?? DISCORD_API_URL).replace(/\/+$/, "");
      const key = createHash("sha256").update(`${api}\n${token}`).digest("hex").slice(0, 32);
      const bot = bots.get(key) ?? { token, api, targets: [] };
      const target = { projectId: doc.project.id, connection: conn.name };
      bot.targets.push({ ...target, botId: vars("BotID") ?? "" });
      bots.set(key, bot);
    }
  }
  return bots;
}

/** A connection's event as a delivery to its triggers on the project's active deployment. */
async function deliveryOf(
  deps: DiscordKeeperDeps,
  target: Target,
  event: { event_type: string; data: unknown },
): Promise<Delivery | null> {
  const doc: ProjectDoc | null = await deps.stores.projects.get(target.projectId);
  const conn = doc?.connections?.find((c) => c.name === target.connection);
  const deploymentId = doc?.project.active_deployment_id;
  if (!doc || !conn || conn.integration !== "discord" || !deploymentId) return null;
  const deployment = await deps.stores.deployments.get(deploymentId);
  if (!deployment) return null;
  return {
    source: { kind: "connection", name: conn.name },
    doc,
    deployment: { id: deploymentId, buildId: deployment.build_id },
    events: [
      { type: event.event_type, data: event.data as ConnectionData, webhook_id: conn.inbound_id },
    ],
  };
}

/**
 * One bot's gateway on the one instance that holds its key: asked for every third of a lease
 * (renewed while held), opened once held, closed once lost or let go. Its dispatches go to its
 * targets in the order they came.
 */
class BotGateway {
  spec: BotSpec;
  #deps: DiscordKeeperDeps;
  #key: string;
  #held: string | null = null;
  #gateway: DiscordGateway | null = null;
  #timer: NodeJS.Timeout | null = null;
  #order: Promise<unknown> = Promise.resolve();
  #stopped = false;
  /** Another instance held the bot's gateway at the last look (said once). */
  #waiting = false;

  constructor(deps: DiscordKeeperDeps, key: string, spec: BotSpec) {
    this.#deps = deps;
    this.#key = `discord-gateway:${key}`;
    this.spec = spec;
  }

  async tick(): Promise<void> {
    if (this.#stopped) return;
    const { cluster, log } = this.#deps;
    let held: string | null = "alone";
    let failed = "";
    if (cluster.hold) {
      held = await cluster.hold(this.#key, this.#held).catch((e: unknown) => {
        failed = e instanceof Error ? e.message : String(e);
        return null;
      });
    }
    if (this.#stopped) {
      if (held) await this.#letGo(held);
      return;
    }
    if (held) {
      this.#held = held;
      if (!this.#gateway) this.#open();
    } else if (this.#gateway) {
      // Not renewed: another instance may take it once the claim runs out, so it closes here.
      const why = failed ? `its claim not renewed (${failed})` : "another instance holds it now";
      log.warn(`discord: ${this.#where()}: the bot's gateway closed: ${why}`);
      await this.#close();
    } else if (!this.#waiting)
      log.info(`discord: ${this.#where()}: another instance holds the bot's gateway`);
    this.#waiting = !held;
    if (cluster.hold) {
      const every = (cluster.leaseMs ?? 15_000) / 3;
      this.#timer = setTimeout(() => void this.tick(), every);
    }
  }

  #where(): string {
    return this.spec.targets.map((t) => t.connection).join(", ");
  }

  #open(): void {
    const { log } = this.#deps;
    const where = () => this.#where();
    const gateway = new DiscordGateway({
      token: this.spec.token,
      url: () => gatewayUrl(this.spec.api, this.spec.token, this.#deps.fetch),
      onDispatch: (name, data) => {
        this.#order = this.#order.then(() => this.#deliver(gateway, name, data));
      },
      log: (line) => log.info(`discord: ${where()}: ${line}`),
    });
    this.#gateway = gateway;
    log.info(`discord: ${where()}: opening the bot's gateway`);
    gateway.start();
  }

  async #deliver(gateway: DiscordGateway, name: string, data: unknown): Promise<void> {
    for (const target of this.spec.targets) {
      const event = discordEvent(name, data, target.botId || gateway.botId);
      if (!event) continue;
      try {
        const delivery = await deliveryOf(this.#deps, target, event);
        if (delivery) await this.#deps.ingest(delivery);
      } catch (e) {
        this.#deps.log.warn(`discord: ${target.connection}: ${name} not delivered: ${String(e)}`);
      }
    }
  }

  async #close(): Promise<void> {
    const gateway = this.#gateway;
    this.#gateway = null;
    await gateway?.stop();
  }

  async #letGo(held: string): Promise<void> {
    if (held !== "alone") await this.#deps.cluster.letGo?.(this.#key, held).catch(() => {});
  }

  /** The gateway closed and the key let go, for another instance to take at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#close();
    await this.#order;
    if (this.#held) await this.#letGo(this.#held);
    this.#held = null;
  }
}

/**
 * The gateways of the bots that projects' discord connections name (`BotToken`, and
 * `base_url` for the REST base `GET /gateway/bot` is read from): one per bot, opened on the one
 * instance of a fleet that holds it (`cluster.hold`, renewed every third of a lease and taken
 * over by another instance when the holder dies or stops), closed when no connection names the
 * bot any more or its token changed. Each forwarded dispatch becomes an event of every
 * connection naming the bot, for its triggers and subscribers.
 * @example const gateways = discordGateways({ stores, secrets, cluster, ingest, log }); gateways.changed();
 */
export function discordGateways(deps: DiscordKeeperDeps) {
  const bots = new Map<string, BotGateway>();
  const queue = serialQueue((e: unknown) => deps.log.error("discord gateways", e));
  let disposed = false;
  const sync = async () => {
    const wanted = disposed ? new Map<string, BotSpec>() : await wantedBots(deps);
    for (const [key, bot] of bots) {
      if (wanted.has(key)) continue;
      bots.delete(key);
      if (!disposed)
        deps.log.info("discord: a bot no connection names any more: its gateway closed");
      await bot.stop();
    }
    for (const [key, spec] of wanted) {
      const bot = bots.get(key);
      if (bot) bot.spec = spec;
      else {
        const made = new BotGateway(deps, key, spec);
        bots.set(key, made);
        await made.tick();
      }
    }
  };
  /** One look at the bots after those queued; it never rejects (a failure is logged). */
  const serial = () => queue.run(sync).catch(() => {});
  let relook: NodeJS.Timeout | null = null;
  return {
    /** A project changed (deploy, var set): the bots looked at again, in the background. */
    changed(_projectId?: string) {
      if (!disposed) void serial();
    },
    /** The first look; on a fleet, another every minute (a change told over a bus that was down). */
    start() {
      void serial();
      if (!deps.cluster.shared) return;
      relook = setInterval(() => void (disposed ? null : serial()), RELOOK_MS);
      relook.unref();
    },
    idle: () => queue.idle(),
    async dispose() {
      disposed = true;
      if (relook) clearInterval(relook);
      await serial();
    },
  };
}

export type DiscordGateways = ReturnType<typeof discordGateways>;
