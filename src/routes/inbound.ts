import { createHash } from "node:crypto";
import type { Context } from "hono";
import { type Clock, systemClock } from "../clock.ts";
import {
  connectionVars,
  type EventSource,
  type InboundRequest,
  type Verdict,
  verifierOf,
} from "../connections/index.ts";
import { HooklineError } from "../errors.ts";
import { buildWebhookData } from "../events/data.ts";
import { newId } from "../ids.ts";
import { type Logger, silentLogger } from "../log.ts";
import { REFUSED_DELIVERY } from "../observe/observer.ts";
import type { SecretBox } from "../secrets.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";
import { dispatchConnectionEvents, type ResolvedConnection } from "./connection-dispatch.ts";
import type { Deduper } from "./dedup.ts";
import { deliveryRoutes, readDelivery } from "./delivery.ts";
import { createRefusalLog } from "./refusal-log.ts";

export interface InboundDeps {
  stores: Stores;
  sessions: Pick<SessionManager, "ingest">;
  secrets: SecretBox;
  maxBody: number;
  bodyTimeoutMs?: number;
  /** Repeated deliveries (X-GitHub-Delivery, Slack's event_id or trigger_id, webhook-id) answered once. */
  dedup?: Deduper;
  log?: Logger;
  /** The clock of the timestamp windows and of the refusal log's (tests pass their own). */
  clock?: Clock;
}

const STATUS_CODE = { 400: "bad_request", 401: "unauthorized", 403: "forbidden" } as const;

/** An inbound id's connection and active deployment, or null (unknown id, nothing active). */
async function resolve(stores: Stores, id: string): Promise<ResolvedConnection | null> {
  const ref = await stores.webhooks.get(id);
  if (!ref?.connection) return null;
  const doc = await stores.projects.get(ref.project_id);
  const connection = doc?.connections?.find((c) => c.name === ref.connection);
  const deploymentId = doc?.project.active_deployment_id;
  if (!doc || !connection || connection.inbound_id !== id || !deploymentId) return null;
  const deployment = await stores.deployments.get(deploymentId);
  return deployment ? { doc, connection, deploymentId, buildId: deployment.build_id } : null;
}

/** The integration's verifier over one request (http's data is a webhook trigger's). */
function verify(
  c: Context,
  r: ResolvedConnection,
  req: InboundRequest,
  open: (s: string) => string,
): Verdict {
  const vars = connectionVars(r.doc, r.connection.name, open);
  const webhook = () =>
    buildWebhookData({
      method: req.method,
      url: new URL(c.req.url),
      headers: req.headers,
      body: req.body,
      webhookPrefix: `/inbound/${r.connection.inbound_id}`,
    });
  return verifierOf(r.connection.integration as EventSource)(req, vars, webhook);
}

/**
 * `ANY /inbound/<inbound_id>[/<suffix>]`: a connection's provider posts here. The request is
 * verified with the connection's secrets before anything is stored; a refusal is problem+json
 * (400, 401, 403, 413) and starts nothing. Verified events go to `dispatchConnectionEvents`.
 * Slack is answered 200 with an empty body (within its 3 s: sessions run on their own); the
 * others 202 with the event and session ids.
 */
export function inboundRoutes(deps: InboundDeps) {
  const clock = deps.clock ?? systemClock;
  const refusals = createRefusalLog(deps.log ?? silentLogger, clock);
  const handle = async (c: Context) => {
    const id = c.req.param("id")!;
    const resolved = await resolve(deps.stores, id);
    if (!resolved) throw new HooklineError("not_found", "no connection at this address");
    const raw = c.req.raw;
    const body = await readDelivery(c, deps);
    const req = { method: raw.method, headers: raw.headers, body, now: clock.now() };
    const { connection, doc } = resolved;
    const verdict = verify(c, resolved, req, (s) => deps.secrets.open(s));
    const where = `connection ${doc.project.name}/${connection.name}`;
    if (verdict.kind === "refuse") {
      refusals.refused(
        connection.id,
        where,
        `${where}: refused (${verdict.status}): ${verdict.detail}`,
      );
      const reason = STATUS_CODE[verdict.status];
      c.set(REFUSED_DELIVERY as never, { integration: connection.integration, reason } as never);
      throw new HooklineError(reason, verdict.detail);
    }
    if (verdict.kind === "answer") {
      return c.body(verdict.body, verdict.status as 200, { "content-type": verdict.contentType });
    }
    const slack = connection.integration === "slack";
    const answer = (eventId: string, sessionIds: string[] | null) =>
      slack ? c.body(null, 200) : c.json({ event_id: eventId, session_ids: sessionIds }, 202);
    const eventId = newId("evt");
    const key = verdict.delivery
      ? `${connection.id}:${createHash("sha256").update(verdict.delivery).digest("hex").slice(0, 40)}`
      : null;
    const delivery =
      key && deps.dedup
        ? await deps.dedup.begin(key, { event_id: eventId, session_id: null, kind: "accepted" })
        : null;
    if (delivery && !delivery.first) {
      c.header("Idempotent-Replayed", "true");
      return answer(delivery.record.event_id, null);
    }
    const first = delivery?.first ? delivery : null;
    try {
      const done = await dispatchConnectionEvents(deps.sessions, resolved, verdict.events, eventId);
      await first?.accepted();
      return answer(eventId, done.session_ids);
    } catch (err) {
      // Not accepted: a retry of the same delivery may go on.
      await first?.failed().catch(() => {});
      if (err instanceof HooklineError && err.code === "unavailable")
        c.header("Retry-After", String(err.extra.retry_after ?? 1));
      throw err;
    }
  };
  return deliveryRoutes(handle);
}
