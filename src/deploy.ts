import { HooklineError } from "./errors.ts";
import { newId, webhookId } from "./ids.ts";
import type { KeyedLock } from "./locks.ts";
import { type Manifest, ManifestError, parseManifest } from "./manifest/index.ts";
import { type Change, planDeploy, planLines } from "./manifest/plan.ts";
import type { ProjectDoc, TriggerRecord, VarRecord } from "./model/records.ts";
import { safePath } from "./paths.ts";
import type { Runtime } from "./runtime/runtime.ts";
import type { SecretBox } from "./secrets.ts";
import type { Stores } from "./storage/stores.ts";

/** Everything one deploy may upload. */
export const MAX_BUILD_BYTES = 16 * 1024 * 1024;

export interface DeployInput {
  manifest: string;
  manifest_file: string;
  files: Record<string, string>;
}

export interface DeployResult {
  lines: string[];
  progress: string[];
  project_id: string;
  deployment_id: string;
}

export interface DeployContext {
  stores: Stores;
  runtime: Runtime;
  secrets: SecretBox;
  locks: KeyedLock;
  /** Told after a project's configuration changed, so caches drop it. */
  changed(projectId: string): void;
}

/** The files with normalised paths (refusing any that leave the folder), and their size. */
function checkFiles(manifest: Manifest, given: Record<string, string>) {
  let size = 0;
  const files: Record<string, string> = {};
  for (const [path, content] of Object.entries(given)) {
    files[safePath(path)] = content;
    size += Buffer.byteLength(content, "base64");
    if (size > MAX_BUILD_BYTES) {
      throw new HooklineError("payload_too_large", "the project's files exceed 16 MiB");
    }
  }
  const problems = manifest.triggers
    .filter((t) => t.call && !(t.call.split(":")[0]! in files))
    .map(
      (t) =>
        `trigger "${t.name}": call "${t.call}": file "${t.call!.split(":")[0]}" is not in the build`,
    );
  if (problems.length) throw new HooklineError("unprocessable", problems.join("\n"));
  return { files, size };
}

/**
 * Plans and applies a deploy: project, vars, triggers, build, deployment, activation. All or
 * nothing: everything is checked first (manifest, files, Python), and the project's new
 * configuration is committed with one write. Deploys of one project run one at a time.
 */
export async function deploy(ctx: DeployContext, input: DeployInput): Promise<DeployResult> {
  let manifest: Manifest;
  try {
    manifest = parseManifest(input.manifest, input.manifest_file || "manifest.yaml");
  } catch (err) {
    if (err instanceof ManifestError) {
      throw new HooklineError("unprocessable", err.message, { issues: err.issues });
    }
    throw err;
  }
  const { files, size } = checkFiles(manifest, input.files);
  const name = manifest.project.name;
  return ctx.locks.run(`project:${name}`, async () => {
    const { stores, secrets } = ctx;
    const doc = await stores.projects.byName(name);
    const changes = planDeploy(doc, manifest, (s) => secrets.open(s));
    const progress: string[] = [];
    const buildId = newId("bld");
    const calls = manifest.triggers.flatMap((t) => (t.call ? [t.call] : []));
    await ctx.runtime.check({ id: buildId, files }, calls, (line) => progress.push(line));

    const t = new Date().toISOString();
    const project = doc?.project ?? {
      id: newId("prj"),
      name,
      env_id: newId("env"),
      active_deployment_id: null,
      created_at: t,
      updated_at: t,
    };
    const env = doc?.env ?? {
      id: project.env_id,
      project_id: project.id,
      name: "default",
      created_at: t,
    };
    const lines = planLines(name, changes);
    const exec = (line: string) => lines.push(`[exec] ${line}`);
    if (!doc) exec(`create_project "${name}": ${project.id} created`);

    const next: ProjectDoc = {
      project: { ...project, updated_at: t },
      env,
      vars: applyVars(doc, manifest, changes, secrets, t, env.id, name, exec),
      triggers: [],
    };
    const created: TriggerRecord[] = [];
    const deleted: TriggerRecord[] = [];
    for (const c of changes) {
      if (c.kind !== "trigger") continue;
      const label = `"${name}:/${c.name}"`;
      if (c.action === "delete") {
        deleted.push(c.existing!);
        exec(`delete_trigger ${label}: ${c.existing!.id} deleted`);
        continue;
      }
      const spec = c.spec!;
      const base = c.existing ?? {
        id: newId("trg"),
        project_id: project.id,
        name: spec.name,
        type: "webhook" as const,
        webhook_id: webhookId(),
        created_at: t,
      };
      const rec: TriggerRecord = {
        ...base,
        event_type: spec.event_type,
        call: spec.call,
        is_sync: spec.is_sync,
        is_durable: spec.is_durable,
        filter: spec.filter,
        updated_at: c.action === "keep" ? c.existing!.updated_at : t,
      };
      next.triggers.push(rec);
      if (c.action === "create") {
        created.push(rec);
        exec(`create_trigger ${label}: ${rec.id} created`);
        exec(`trigger "${rec.name}" created, webhook path is "/webhooks/${rec.webhook_id}"`);
      } else if (c.action === "update") {
        exec(`update_trigger ${label}: ${rec.id} updated`);
      }
    }

    const deploymentId = newId("dep");
    await stores.builds.put({
      id: buildId,
      project_id: project.id,
      files,
      size,
      created_at: t,
    });
    exec(`create_build: created "${buildId}"`);
    await stores.deployments.put({
      id: deploymentId,
      project_id: project.id,
      build_id: buildId,
      state: "active",
      created_at: t,
      updated_at: t,
    });
    exec(`create_deployment: created "${deploymentId}"`);
    for (const rec of created) {
      await stores.webhooks.put(rec.webhook_id, { project_id: project.id, trigger_id: rec.id });
    }
    const previous = project.active_deployment_id;
    next.project.active_deployment_id = deploymentId;
    await stores.projects.put(next); // the commit point
    exec("activate_deployment: activated");

    // Tidy-up after the commit: a failure here leaves stale entries the routes ignore.
    for (const rec of deleted) await stores.webhooks.delete(rec.webhook_id);
    if (previous) {
      const old = await stores.deployments.get(previous);
      if (old) await stores.deployments.put({ ...old, state: "inactive", updated_at: t });
    }
    ctx.changed(project.id);
    return { lines, progress, project_id: project.id, deployment_id: deploymentId };
  });
}

function applyVars(
  doc: ProjectDoc | null,
  manifest: Manifest,
  changes: Change[],
  secrets: SecretBox,
  t: string,
  envId: string,
  project: string,
  exec: (line: string) => void,
): VarRecord[] {
  const specs = new Map(manifest.vars.map((v) => [v.name, v]));
  const out = new Map((doc?.vars ?? []).map((v) => [v.name, v]));
  for (const c of changes) {
    if (c.kind !== "var") continue;
    const label = `"${project}/${c.name}"`;
    if (c.action === "delete") {
      out.delete(c.name);
      exec(`delete_var ${label}: ${envId} deleted`);
    } else if (c.action !== "keep") {
      const spec = specs.get(c.name)!;
      out.set(c.name, {
        env_id: envId,
        name: spec.name,
        value: spec.secret ? secrets.seal(spec.value) : spec.value,
        secret: spec.secret,
        source: "manifest",
        updated_at: t,
      });
      exec(`set_var ${label}: ${envId} updated`);
    }
  }
  return [...out.values()];
}
