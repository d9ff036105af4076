import type { ConnectionRecord, ProjectDoc, TriggerRecord, VarRecord } from "../model/records.ts";
import type { Manifest, TriggerSpec } from "./index.ts";
import type { ConnectionSpec } from "./schema.ts";

/** One change a deploy makes, in the order it prints. */
export type Change =
  /** `update`: its `display_name` changes. */
  | { kind: "project"; action: "create" | "update" | "keep" }
  | { kind: "var"; name: string; action: "create" | "update" | "keep" | "delete" }
  | {
      kind: "connection";
      name: string;
      action: "create" | "update" | "keep" | "delete";
      spec?: ConnectionSpec;
      existing?: ConnectionRecord;
    }
  | {
      kind: "trigger";
      name: string;
      action: "create" | "update" | "keep" | "delete";
      spec?: TriggerSpec;
      existing?: TriggerRecord;
    };

const TRIGGER_FIELDS = [
  "event_type",
  "call",
  "is_sync",
  "is_durable",
  "reuse_process",
  "filter",
  "dedup_header",
] as const;
/** Fields only some kinds of trigger have: absent on the record is null in the spec. */
const KIND_FIELDS = ["schedule", "timezone", "connection"] as const;

function sameTrigger(spec: TriggerSpec, rec: TriggerRecord): boolean {
  // Records written before dedup_header existed lack it: absent is "none", as "" is.
  const have = {
    ...rec,
    dedup_header: rec.dedup_header ?? "",
    reuse_process: rec.reuse_process ?? false,
  };
  return (
    spec.type === rec.type &&
    TRIGGER_FIELDS.every((f) => spec[f] === have[f]) &&
    KIND_FIELDS.every((f) => spec[f] === (rec[f] ?? null)) &&
    // Both come from the manifest's one transform (src/manifest/retry.ts): keys in one order.
    JSON.stringify(spec.retry) === JSON.stringify(rec.retry ?? null)
  );
}

/**
 * A value set with `cli var set` wins over the manifest's until it is deleted; the manifest's
 * description of it still counts.
 */
function sameVar(spec: Manifest["vars"][number], rec: VarRecord, open: (s: string) => string) {
  if (spec.description !== (rec.description ?? "")) return false;
  if (rec.source === "cli") return true;
  if (spec.secret !== rec.secret) return false;
  return (rec.secret ? open(rec.value) : rec.value) === spec.value;
}

/**
 * What a deploy of `manifest` changes in the project as it stands (`doc`, null when new).
 * Vars set with `cli var set` are not the manifest's, so a manifest without them keeps them.
 * @example planDeploy(null, manifest, (s) => s)[0] // { kind: "project", action: "create" }
 */
export function planDeploy(
  doc: ProjectDoc | null,
  manifest: Manifest,
  openSecret: (sealed: string) => string,
): Change[] {
  const renamed = (doc?.project.display_name ?? "") !== manifest.project.display_name;
  const project = !doc ? "create" : renamed ? "update" : "keep";
  const changes: Change[] = [{ kind: "project", action: project }];
  const connections = new Map(doc?.connections?.map((c) => [c.name, c]));
  for (const spec of manifest.connections) {
    const existing = connections.get(spec.name);
    const action = !existing
      ? "create"
      : existing.integration === spec.integration
        ? "keep"
        : "update";
    changes.push({ kind: "connection", name: spec.name, action, spec, existing });
  }
  const wantedConnections = new Set(manifest.connections.map((c) => c.name));
  for (const existing of doc?.connections ?? []) {
    if (!wantedConnections.has(existing.name)) {
      changes.push({ kind: "connection", name: existing.name, action: "delete", existing });
    }
  }
  const vars = new Map(doc?.vars.map((v) => [v.name, v]));
  for (const spec of manifest.vars) {
    const rec = vars.get(spec.name);
    const action = !rec ? "create" : sameVar(spec, rec, openSecret) ? "keep" : "update";
    changes.push({ kind: "var", name: spec.name, action });
  }
  const wanted = new Set(manifest.vars.map((v) => v.name));
  for (const rec of doc?.vars ?? []) {
    if (rec.source === "manifest" && !wanted.has(rec.name)) {
      changes.push({ kind: "var", name: rec.name, action: "delete" });
    }
  }
  const triggers = new Map(doc?.triggers.map((t) => [t.name, t]));
  for (const spec of manifest.triggers) {
    const existing = triggers.get(spec.name);
    const samePickling = (existing?.pickle_values ?? false) === (manifest.version === "v2");
    const same = existing && sameTrigger(spec, existing) && samePickling;
    const action = !existing ? "create" : same ? "keep" : "update";
    changes.push({ kind: "trigger", name: spec.name, action, spec, existing });
  }
  const names = new Set(manifest.triggers.map((t) => t.name));
  for (const existing of doc?.triggers ?? []) {
    if (!names.has(existing.name)) {
      changes.push({ kind: "trigger", name: existing.name, action: "delete", existing });
    }
  }
  return changes;
}
