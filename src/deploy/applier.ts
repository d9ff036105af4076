import { newId, webhookId } from "../ids.ts";
import type { Manifest } from "../manifest/index.ts";
import type { Change } from "../manifest/plan.ts";
import type {
  ConnectionRecord,
  EnvRecord,
  ProjectDoc,
  ProjectRecord,
  TriggerRecord,
  VarRecord,
} from "../model/records.ts";
import type { ExecStep } from "../wire/deploy-result.ts";
import { applyConnection } from "./connections.ts";
import { subjectOf } from "./plan-steps.ts";

export interface PlanApplierOptions {
  /** The project as it stands, null when the deploy creates it. */
  doc: ProjectDoc | null;
  manifest: Manifest;
  /** Encrypts a secret var's value for storage. */
  seal(value: string): string;
  /** The deploy's time, on every record it writes. */
  now: string;
}

/** A plan applied in memory: what the deploy will store, and the steps it took to get there. */
export interface AppliedPlan {
  /** The project's next configuration; its active deployment is still the previous one. */
  doc: ProjectDoc;
  /** Triggers with new webhook ids: their webhook refs are written before the commit. (Only
   * webhook triggers have one; schedule and connection triggers keep `webhook_id` "".) */
  created: TriggerRecord[];
  /** Triggers that left the manifest: their webhook refs go after the commit. */
  deleted: TriggerRecord[];
  /** Connections with a new inbound id, and inbound ids given up: refs written with the commit. */
  inbound: { created: ConnectionRecord[]; released: string[] };
  steps: ExecStep[];
}

/** Takes a plan's changes in order, then hands back the applied plan. */
export interface PlanApplier {
  apply(change: Change): void;
  result(): AppliedPlan;
}

/** What each step the applier records did to its id. */
const RESULTS = {
  create_project: "created",
  update_project: "updated",
  set_var: "updated",
  delete_var: "deleted",
  create_connection: "created",
  update_connection: "updated",
  delete_connection: "deleted",
  create_trigger: "created",
  update_trigger: "updated",
  delete_trigger: "deleted",
} as const;

function newProject(name: string, now: string): { project: ProjectRecord; env: EnvRecord } {
  const project: ProjectRecord = {
    id: newId("prj"),
    name,
    env_id: newId("env"),
    active_deployment_id: null,
    created_at: now,
    updated_at: now,
  };
  const env: EnvRecord = {
    id: project.env_id,
    project_id: project.id,
    name: "default",
    created_at: now,
  };
  return { project, env };
}

type Op = keyof typeof RESULTS;

/**
 * Applies a plan's changes one at a time to a copy of the project, recording an exec step for
 * each one that does something. Nothing is stored here: the caller commits the result.
 * @example const applier = createPlanApplier({ doc, manifest, seal, now });
 *   for (const c of changes) applier.apply(c); const { doc: next, steps } = applier.result();
 */
export function createPlanApplier(opts: PlanApplierOptions): PlanApplier {
  const { manifest, now } = opts;
  const name = manifest.project.name;
  const { project, env } = opts.doc ?? newProject(name, now);
  // Vars start from what is stored (so `cli var set` ones stay); triggers follow the manifest.
  const vars = new Map((opts.doc?.vars ?? []).map((rec) => [rec.name, rec]));
  const triggers: TriggerRecord[] = [];
  const connections: ConnectionRecord[] = [];
  const inbound: AppliedPlan["inbound"] = { created: [], released: [] };
  const created: TriggerRecord[] = [];
  const deleted: TriggerRecord[] = [];
  const steps: ExecStep[] = [];
  const step = (op: Op, kind: Change["kind"], of: string, id: string, more?: Partial<ExecStep>) =>
    steps.push({ op, subject: subjectOf(kind, name, of), id, result: RESULTS[op], ...more });

  function applyVar(change: Extract<Change, { kind: "var" }>) {
    const op = applyVarChange(vars, change, env.id, opts);
    if (op) step(op, "var", change.name, env.id);
  }

  function applyTrigger(change: Extract<Change, { kind: "trigger" }>) {
    if (change.action === "delete") {
      if (change.existing!.webhook_id) deleted.push(change.existing!);
      step("delete_trigger", "trigger", change.name, change.existing!.id);
      return;
    }
    const existing = change.existing;
    // A trigger that stops being a webhook gives its webhook id up.
    if (existing?.webhook_id && change.spec!.type !== "webhook") deleted.push(existing);
    const rec = triggerRecord(change, project.id, opts);
    triggers.push(rec);
    const newWebhook = Boolean(rec.webhook_id) && rec.webhook_id !== existing?.webhook_id;
    if (newWebhook) created.push(rec);
    if (change.action === "keep") return;
    const more = change.action === "update" && newWebhook ? { new_webhook: true } : {};
    step(`${change.action}_trigger`, "trigger", change.name, rec.id, more);
  }

  function applyConnectionChange(change: Extract<Change, { kind: "connection" }>) {
    const done = applyConnection(change, now);
    if (done.released) inbound.released.push(done.released);
    if (done.record) connections.push(done.record);
    if (done.created) inbound.created.push(done.record!);
    if (change.action === "keep") return;
    const id = done.record?.id ?? change.existing!.id;
    step(`${change.action}_connection`, "connection", change.name, id);
  }

  return {
    apply(change: Change): void {
      if (change.kind === "var") applyVar(change);
      else if (change.kind === "connection") applyConnectionChange(change);
      else if (change.kind === "trigger") applyTrigger(change);
      else if (change.action !== "keep") {
        step(`${change.action}_project`, "project", name, project.id);
      }
    },
    result(): AppliedPlan {
      const doc: ProjectDoc = {
        project: projectRecord(project, manifest, now),
        env,
        vars: [...vars.values()],
        triggers: [...triggers],
        connections: [...connections],
      };
      return { doc, created: [...created], deleted: [...deleted], inbound, steps: [...steps] };
    },
  };
}

/** The project as the manifest leaves it: its display name and manifest version, touched now. */
function projectRecord(project: ProjectRecord, manifest: Manifest, now: string): ProjectRecord {
  const { display_name: _, ...rest } = project;
  const display = manifest.project.display_name;
  return {
    ...rest,
    ...(display && { display_name: display }),
    manifest_version: manifest.version,
    updated_at: now,
  };
}

/**
 * What a var change does to the environment's vars (by name); returns the step it makes, none
 * for a var kept as it is.
 */
function applyVarChange(
  vars: Map<string, VarRecord>,
  change: Extract<Change, { kind: "var" }>,
  envId: string,
  opts: PlanApplierOptions,
): Op | null {
  if (change.action === "keep") return null;
  if (change.action === "delete") {
    vars.delete(change.name);
    return "delete_var";
  }
  const spec = opts.manifest.vars.find((v) => v.name === change.name)!;
  const existing = vars.get(change.name);
  // A value set with `cli var set` stays; only the manifest's description of it changes.
  const next =
    existing?.source === "cli"
      ? { ...withDescription(existing, spec.description), updated_at: opts.now }
      : varRecord(spec, envId, opts);
  vars.set(change.name, next);
  return "set_var";
}

/** A manifest var as stored in the project's environment, a secret sealed. */
function varRecord(
  spec: Manifest["vars"][number],
  envId: string,
  opts: PlanApplierOptions,
): VarRecord {
  const rec: VarRecord = {
    env_id: envId,
    name: spec.name,
    value: spec.secret ? opts.seal(spec.value) : spec.value,
    secret: spec.secret,
    source: "manifest",
    updated_at: opts.now,
  };
  return withDescription(rec, spec.description);
}

/** The var with `description`, or without one when it is "" (records keep no empty field). */
function withDescription(rec: VarRecord, description: string): VarRecord {
  const { description: _, ...rest } = rec;
  return description ? { ...rest, description } : rest;
}

/**
 * The record a created, updated or kept trigger becomes. A surviving webhook keeps its id and
 * webhook id: its URL goes on working. Only webhooks have one.
 */
function triggerRecord(
  change: Extract<Change, { kind: "trigger" }>,
  projectId: string,
  opts: PlanApplierOptions,
): TriggerRecord {
  const { now } = opts;
  const spec = change.spec!;
  const existing = change.existing;
  const hadWebhook = Boolean(existing?.webhook_id);
  const isWebhook = spec.type === "webhook";
  return {
    id: existing?.id ?? newId("trg"),
    project_id: projectId,
    name: spec.name,
    type: spec.type,
    webhook_id: !isWebhook ? "" : hadWebhook ? existing!.webhook_id : webhookId(),
    created_at: existing?.created_at ?? now,
    ...(spec.schedule !== null && { schedule: spec.schedule, timezone: spec.timezone! }),
    ...(spec.connection !== null && { connection: spec.connection }),
    event_type: spec.event_type,
    call: spec.call,
    is_sync: spec.is_sync,
    is_durable: spec.is_durable,
    ...(opts.manifest.version === "v2" && { pickle_values: true }),
    ...(spec.reuse_process && { reuse_process: true }),
    filter: spec.filter,
    dedup_header: spec.dedup_header,
    ...(spec.retry && { retry: spec.retry }),
    updated_at: change.action === "keep" ? change.existing!.updated_at : now,
  };
}

/**
 * Every change of a plan applied in order (see `createPlanApplier`).
 * @example applyPlan({ doc: null, manifest, seal, now }, planDeploy(null, manifest, open)).steps[0]
 *   // { op: "create_project", subject: "demo", id: "prj_…", result: "created" }
 */
export function applyPlan(opts: PlanApplierOptions, changes: Change[]): AppliedPlan {
  const applier = createPlanApplier(opts);
  for (const change of changes) applier.apply(change);
  return applier.result();
}
