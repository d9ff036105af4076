import { type Clock, systemClock } from "../clock.ts";
import {
  connectionVars,
  type EventSource,
  type InboundEvent,
  type InboundRequest,
  type Pulled,
  type Verdict,
  verifierOf,
} from "../connections/index.ts";
import { HooklineError } from "../errors.ts";
import { buildWebhookData } from "../events/data.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { ConnectionData } from "../model/records.ts";
import type { SecretBox } from "../secrets.ts";
import type { Delivery } from "../sessions/manager.ts";
import type { ResolvedAddress } from "./address-cache.ts";
import { connectionKey } from "./dedup.ts";
import {
  type DeliveryContext,
  type DeliveryDeps,
  type DeliveryRoute,
  deliveryRoutes,
  type TakenRequest,
} from "./delivery.ts";
import { createRefusalLog } from "./refusal-log.ts";

export interface InboundDeps {
  secrets: SecretBox;
  log?: Logger;
  /** The clock of the timestamp windows and of the refusal log's (tests pass their own). */
  clock?: Clock;
  /**
   * What changed at the provider since the connection's last read, as events (Google's push
   * notifications carry none: src/platform/google-watches.ts reads them). Absent: such a
   * notification is answered 503.
   */
  pull?: (projectId: string, connection: string) => Promise<Pulled>;
}

const STATUS_CODE = { 400: "bad_request", 401: "unauthorized", 403: "forbidden" } as const;

/**
 * `ANY /inbound/<inbound_id>[/<suffix>]`, taken as every delivery is (delivery.ts): a
 * connection's provider posts here. The request is verified with the connection's secrets
 * before anything is stored; a refusal is problem+json (400, 401, 403) and starts nothing.
 * Verified events start a session of each of the connection's triggers that takes them
 * (`ingest` plans it). Slack is answered 200 with an empty body (within its 3 s: sessions run on
 * their own); the others 202 with the event and session ids.
 * @example app.route("/inbound", inboundRoutes(deps, { secrets, log }));
 */
export function inboundRoutes(deps: DeliveryDeps, inbound: InboundDeps) {
  return deliveryRoutes(inboundRoute(inbound), deps);
}

/** How a connection's delivery is verified, what its events are, and how it is answered. */
function inboundRoute(deps: InboundDeps): DeliveryRoute {
  const clock = deps.clock ?? systemClock;
  const refusals = createRefusalLog(deps.log ?? silentLogger, clock);
  const open = (sealed: string) => deps.secrets.open(sealed);
  const slack = (address: ResolvedAddress) => address.connection!.integration === "slack";
  return {
    unknown: "no connection at this address",
    serves: (address) => address.connection !== null,
    async take(c, address, body) {
      const raw = c.req.raw;
      const connection = address.connection!;
      const suffix = suffixOf(new URL(raw.url).pathname, connection.inbound_id);
      const req = { method: raw.method, headers: raw.headers, body, now: clock.now(), suffix };
      const verdict = verify(c, address, req, open);
      if (verdict.kind === "refuse") {
        const where = `connection ${address.doc.project.name}/${connection.name}`;
        const line = `${where}: refused (${verdict.status}): ${verdict.detail}`;
        refusals.refused(connection.id, where, line);
        const reason = STATUS_CODE[verdict.status];
        c.set("refusedDelivery", { integration: connection.integration, reason });
        throw new HooklineError(reason, verdict.detail);
      }
      if (verdict.kind === "answer") {
        const headers = { "content-type": verdict.contentType };
        return { answer: c.body(verdict.body, verdict.status as 200, headers) };
      }
      if (verdict.kind === "pull") return pulled(c, address, deps.pull);
      const delivery = connectionDelivery(address, verdict.events);
      return { delivery, key: connectionKey(connection.id, verdict.delivery) };
    },
    async answer(c, address, done) {
      if (slack(address)) return c.body(null, 200);
      const sessionIds = done.flatMap((d) => (d.session ? [d.session.id] : []));
      return c.json({ event_id: done[0]!.event.id, session_ids: sessionIds }, 202);
    },
    replay(c, address, record) {
      c.header("Idempotent-Replayed", "true");
      if (slack(address)) return c.body(null, 200);
      return c.json({ event_id: record.event_id, session_ids: null }, 202);
    },
  };
}

/** What follows `/inbound/<id>/` in a path, without slashes around it. */
function suffixOf(path: string, inboundId: string): string {
  const at = path.indexOf(`/inbound/${inboundId}`);
  const rest = at < 0 ? "" : path.slice(at + `/inbound/${inboundId}`.length);
  return rest.replace(/^\/+|\/+$/g, "");
}

/**
 * A verified notification's events, read from the provider: none (nothing changed that the
 * connection's cursor had not seen) is answered 200 with nothing stored.
 */
async function pulled(
  c: DeliveryContext,
  address: ResolvedAddress,
  pull: InboundDeps["pull"],
): Promise<TakenRequest> {
  if (!pull) throw new HooklineError("unavailable", "this service does not read Google's changes");
  const { events, settle } = await pull(address.doc.project.id, address.connection!.name);
  if (!events.length) {
    await settle(true);
    return { answer: c.json({ ok: true, events: 0 }, 200) };
  }
  return { delivery: connectionDelivery(address, events), key: null, settle };
}

/** A connection's verified events, for the connection's triggers, on the active deployment. */
export function connectionDelivery(address: ResolvedAddress, events: InboundEvent[]): Delivery {
  const connection = address.connection!;
  return {
    source: { kind: "connection", name: connection.name },
    doc: address.doc,
    deployment: { id: address.deploymentId, buildId: address.buildId },
    events: events.map((e) => ({
      type: e.event_type,
      data: e.data as ConnectionData,
      webhook_id: connection.inbound_id,
    })),
  };
}

/** The integration's verifier over one request (http's data is a webhook trigger's). */
function verify(
  c: DeliveryContext,
  address: ResolvedAddress,
  req: InboundRequest,
  open: (s: string) => string,
): Verdict {
  const connection = address.connection!;
  const vars = connectionVars(address.doc, connection.name, open);
  const webhook = () =>
    buildWebhookData({
      method: req.method,
      url: new URL(c.req.url),
      headers: req.headers,
      body: req.body,
      webhookPrefix: `/inbound/${connection.inbound_id}`,
    });
  return verifierOf(connection.integration as EventSource)(req, vars, webhook);
}
