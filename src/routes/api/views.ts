import { isEventSource, statusOf } from "../../connections/index.ts";
import { HooklineError } from "../../errors.ts";
import type {
  ConnectionRecord,
  ProjectDoc,
  TriggerRecord,
  VarRecord,
} from "../../model/records.ts";
import { nextFire } from "../../schedules/next.ts";
import { MASK } from "../../secrets.ts";
import type { Stores } from "../../storage/records.ts";
import { inboundPath } from "../../wire/deploy-result.ts";

/**
 * What a trigger does now, as the API, `cli trigger list` and the web UI show it: `active` is
 * false for a connection trigger whose integration delivers no events here (it never fires);
 * `next_fire` is a schedule's next slot after `now` while the project is deployed, else null.
 * @example triggerState(doc, nightly, new Date("2026-06-01T00:00:00Z"))
 *   // { active: true, next_fire: "2026-06-01T03:00:00.000Z" }
 */
export const triggerState = (doc: ProjectDoc, t: TriggerRecord, now: Date) => ({
  active:
    t.type !== "connection" ||
    isEventSource(doc.connections?.find((c) => c.name === t.connection)?.integration ?? ""),
  next_fire: doc.project.active_deployment_id ? nextFire(t, now) : null,
});

/** What the API shows of records: secrets masked, webhook paths spelled out. */
export const triggerView = (doc: ProjectDoc, t: TriggerRecord) => ({
  id: t.id,
  project_id: doc.project.id,
  project: doc.project.name,
  name: t.name,
  type: t.type,
  webhook_id: t.webhook_id,
  webhook_path: t.webhook_id ? `/webhooks/${t.webhook_id}` : "",
  schedule: t.schedule ?? null,
  timezone: t.timezone ?? null,
  connection: t.connection ?? null,
  ...triggerState(doc, t, new Date()),
  event_type: t.event_type,
  call: t.call,
  is_sync: t.is_sync,
  is_durable: t.is_durable,
  ...(t.reuse_process && { reuse_process: true }),
  filter: t.filter,
  ...(t.retry && { retry: t.retry }),
  created_at: t.created_at,
  updated_at: t.updated_at,
});

export const connectionView = (
  doc: ProjectDoc,
  c: ConnectionRecord,
  open: (sealed: string) => string,
) => ({
  id: c.id,
  project_id: doc.project.id,
  project: doc.project.name,
  name: c.name,
  integration: c.integration,
  status: statusOf(doc, c, open),
  inbound_path: inboundPath(c.inbound_id, c.integration),
  created_at: c.created_at,
  updated_at: c.updated_at,
});

export const varView = (v: VarRecord) => ({
  name: v.name,
  value: v.secret ? MASK : v.value,
  secret: v.secret,
  description: v.description ?? "",
  source: v.source,
  updated_at: v.updated_at,
});

export const envView = (doc: ProjectDoc) => ({
  id: doc.env.id,
  project_id: doc.project.id,
  project: doc.project.name,
  name: doc.env.name,
});

/** A project by id or by name; 404 otherwise. */
export async function findProject(stores: Stores, ref: string): Promise<ProjectDoc> {
  const doc = ref.startsWith("prj_")
    ? await stores.projects.get(ref)
    : await stores.projects.byName(ref);
  if (!doc) throw new HooklineError("not_found", `project "${ref}" not found`);
  return doc;
}

/** An environment by its id (`env_…`), or by its project's name or id. */
export async function findEnv(stores: Stores, ref: string): Promise<ProjectDoc> {
  if (!ref.startsWith("env_")) return findProject(stores, ref);
  const doc = (await stores.projects.list()).find((d) => d.env.id === ref);
  if (!doc) throw new HooklineError("not_found", `environment "${ref}" not found`);
  return doc;
}
