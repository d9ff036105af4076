import { isEventSource, statusOf } from "../connections/index.ts";
import { newId, webhookId } from "../ids.ts";
import type { Change } from "../manifest/plan.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import { type DeployedConnection, inboundPath } from "../wire/deploy-result.ts";

type ConnectionChange = Extract<Change, { kind: "connection" }>;

/** What applying one connection change did: the record kept (or none), and its inbound ref. */
export interface AppliedConnection {
  record: ConnectionRecord | null;
  /** A new inbound id: its ref is written with the commit. */
  created: boolean;
  /** An inbound id given up (the connection left, or is no event source now). */
  released: string | null;
}

/**
 * One connection change applied: a surviving connection keeps its id and its inbound id (its
 * provider's webhook goes on working); an event source without one gets a new one.
 * @example applyConnection({ kind: "connection", name: "gh", action: "create", spec }, "2026-…")
 */
export function applyConnection(change: ConnectionChange, now: string): AppliedConnection {
  const existing = change.existing;
  if (change.action === "delete") {
    return { record: null, created: false, released: existing?.inbound_id || null };
  }
  const spec = change.spec!;
  const wantsInbound = isEventSource(spec.integration);
  const kept = wantsInbound ? existing?.inbound_id || "" : "";
  const inbound = wantsInbound && !kept ? webhookId() : kept;
  const record: ConnectionRecord = {
    id: existing?.id ?? newId("con"),
    name: spec.name,
    integration: spec.integration,
    inbound_id: inbound,
    created_at: existing?.created_at ?? now,
    updated_at: change.action === "keep" ? existing!.updated_at : now,
  };
  const released =
    existing?.inbound_id && existing.inbound_id !== inbound ? existing.inbound_id : null;
  return { record, created: Boolean(inbound) && inbound !== kept, released };
}

/**
 * A project's connections as a deploy answers them: paths and statuses from the vars now set.
 * @example deployedConnections(doc, (s) => secrets.open(s))[0]?.inbound_path // "/inbound/…"
 */
export function deployedConnections(
  doc: ProjectDoc,
  open: (sealed: string) => string,
): DeployedConnection[] {
  return (doc.connections ?? []).map((c) => ({
    id: c.id,
    name: c.name,
    integration: c.integration,
    inbound_path: inboundPath(c.inbound_id, c.integration),
    status: statusOf(doc, c, open),
  }));
}
