import * as v from "valibot";
import { type ReplayReport, ReplayReportSchema, replayLines } from "./replay-report.ts";

// What `POST /api/v1/deploy` answers, declared once: the service builds it, the CLI checks and
// renders it, the OpenAPI document is generated from it. Valibot only, so the CLI can import it
// without pulling in the service.

/** One line of the plan: what the deploy found and what it will do about it. */
export const PlanStepSchema = v.object({
  kind: v.picklist(["project", "var", "connection", "trigger"]),
  /** The project's, var's or trigger's own name. */
  name: v.string(),
  /** How the lines name it: `demo`, `demo/GREETING`, `demo:/hook`. */
  subject: v.string(),
  action: v.picklist(["create", "update", "keep", "delete"]),
  /** In words: `not found, will create`, `found, no changes needed`, … */
  state: v.string(),
});

/**
 * Something the plan leaves out, said once: a `requirements.txt` line naming the SDK the service
 * provides, or a connection (not supported yet, its triggers stored inactive).
 */
export const PlanNoteSchema = v.object({
  kind: v.picklist(["requirement", "connection", "sessions"]),
  /** The requirement line as written, or `<project>/<connection>`. */
  subject: v.string(),
  text: v.string(),
});

/** One step the deploy carried out, with the id it created or changed. */
export const ExecStepSchema = v.object({
  op: v.picklist([
    "create_project",
    "update_project",
    "set_var",
    "delete_var",
    "create_connection",
    "update_connection",
    "delete_connection",
    "create_trigger",
    "update_trigger",
    "delete_trigger",
    "create_build",
    "create_deployment",
    "activate_deployment",
  ]),
  /** As in the plan; absent for the build and deployment steps. */
  subject: v.optional(v.string()),
  /** `prj_…`, `env_…` (vars live in the environment), `trg_…`, `bld_…` or `dep_…`. */
  id: v.string(),
  result: v.picklist(["created", "updated", "deleted", "activated"]),
  /** An updated trigger that became a webhook: it has a new webhook path (printed). */
  new_webhook: v.optional(v.boolean()),
});

/** A trigger of the deployed project and the path that runs it (a secret: see docs/webhooks.md). */
export const DeployedTriggerSchema = v.object({
  id: v.string(),
  name: v.string(),
  /** "" for schedule and connection triggers, which no URL reaches. */
  webhook_id: v.string(),
  /** `/webhooks/<webhook_id>`: append it to the service URL; "" when `webhook_id` is. */
  webhook_path: v.string(),
});

/** Whether a connection is ready, and else which vars it needs (src/connections/integrations.ts). */
export const ConnectionStatusSchema = v.object({
  state: v.picklist(["ready", "needs", "no_events"]),
  /** Missing vars by their short name; a choice is written `a or b`. */
  needs: v.array(v.string()),
});

/** A connection of the deployed project and the path its provider posts to (a secret, as webhook paths are). */
export const DeployedConnectionSchema = v.object({
  id: v.string(),
  name: v.string(),
  integration: v.string(),
  /** `/inbound/<inbound_id>`; "" for integrations that deliver no events here. */
  inbound_path: v.string(),
  status: ConnectionStatusSchema,
});

export const DeployResultSchema = v.object({
  project_id: v.string(),
  deployment_id: v.string(),
  plan: v.array(PlanStepSchema),
  /** What the deploy leaves out and why; printed as `[plan]` lines after the plan's steps. */
  notes: v.optional(v.array(PlanNoteSchema), []),
  exec: v.array(ExecStepSchema),
  /** Every trigger of the project after the deploy, in manifest order: new, changed or kept. */
  triggers: v.array(DeployedTriggerSchema),
  /** Every connection of the project after the deploy, in manifest order. */
  connections: v.optional(v.array(DeployedConnectionSchema), []),
  /** Notes about slow steps (making the Python environment, installing requirements). */
  progress: v.array(v.string()),
  /** With `check_replay`: what replaying the project's durable sessions found. */
  replay_check: v.optional(ReplayReportSchema),
  /** `plan` and `exec` as the `[plan]`/`[exec]` lines `cli deploy` prints (`resultLines`). */
  lines: v.array(v.string()),
});

export type PlanStep = v.InferOutput<typeof PlanStepSchema>;
export type ExecStep = v.InferOutput<typeof ExecStepSchema>;
export type PlanNote = v.InferOutput<typeof PlanNoteSchema>;
export type DeployedTrigger = v.InferOutput<typeof DeployedTriggerSchema>;
export type DeployedConnection = v.InferOutput<typeof DeployedConnectionSchema>;
export type DeployResult = v.InferOutput<typeof DeployResultSchema>;

/**
 * The path of a webhook id under the service URL.
 * @example webhookPath("f16gtmazn3rvwtkr7vqkj71h2w") // "/webhooks/f16gtmazn3rvwtkr7vqkj71h2w"
 */
export const webhookPath = (webhookId: string) => `/webhooks/${webhookId}`;

function execLine(step: ExecStep): string {
  if (step.subject !== undefined)
    return `[exec] ${step.op} "${step.subject}": ${step.id} ${step.result}`;
  if (step.op === "activate_deployment") return `[exec] ${step.op}: ${step.result}`;
  return `[exec] ${step.op}: ${step.result} "${step.id}"`;
}

/**
 * The `[plan]`/`[exec]` lines of a deploy, as CONTRACT.md ("Deploy") spells them: a plan line per
 * step, an exec line per step, and after each created trigger the line with its webhook path.
 * With `baseUrl` (the service's URL, as `cli deploy` knows it) that line and a connection's end
 * with the whole URL, ready to copy: `…, webhook path is "/webhooks/…", URL http://…/webhooks/…`.
 * @example resultLines({ plan: [{ kind: "project", name: "demo", subject: "demo", action: "keep",
 *   state: "found, no changes needed" }], exec: [], triggers: [] })
 *   // ['[plan] project "demo": found, no changes needed']
 */
export function resultLines(
  result: Pick<DeployResult, "plan" | "exec" | "triggers"> & {
    notes?: PlanNote[];
    connections?: DeployedConnection[];
    replay_check?: ReplayReport;
  },
  baseUrl?: string,
): string[] {
  const url = (path: string) => (baseUrl ? `, URL ${baseUrl.replace(/\/+$/, "")}${path}` : "");
  const lines = result.plan.map((s) => `[plan] ${s.kind} "${s.subject}": ${s.state}`);
  for (const n of result.notes ?? []) lines.push(`[plan] ${n.kind} "${n.subject}": ${n.text}`);
  if (result.replay_check) lines.push(...replayLines(result.replay_check));
  for (const step of result.exec) {
    lines.push(execLine(step));
    if (step.op !== "create_trigger" && !step.new_webhook) continue;
    const trigger = result.triggers.find((t) => t.id === step.id);
    if (trigger?.webhook_path) {
      lines.push(
        `[exec] trigger "${trigger.name}" created, webhook path is "${trigger.webhook_path}"${url(trigger.webhook_path)}`,
      );
    }
  }
  // Every deploy says where each event source's provider posts, and what it still needs.
  for (const c of result.connections ?? []) {
    if (!c.inbound_path) continue;
    const status = c.status.state === "ready" ? "ready" : `needs ${c.status.needs.join(", ")}`;
    lines.push(
      `[exec] connection "${c.name}": inbound path is "${c.inbound_path}" (${status})${url(c.inbound_path)}`,
    );
  }
  return lines;
}

/** The shared Cloud Pub/Sub routes of the integrations whose events come through them. */
const PUBSUB_PATHS: Record<string, string> = {
  gmail: "/google/pubsub/gmail",
  googleforms: "/google/pubsub/forms",
};

/**
 * The path a connection's provider posts to under the service URL: its inbound id's, or for
 * Gmail and Google Forms the shared Pub/Sub route of its kind; "" without an inbound id.
 * @example inboundPath("k3v9…") // "/inbound/k3v9…"; inboundPath("k3v9…", "gmail") // "/google/pubsub/gmail"
 */
export const inboundPath = (inboundId: string, integration = "") =>
  !inboundId ? "" : (PUBSUB_PATHS[integration] ?? `/inbound/${inboundId}`);
