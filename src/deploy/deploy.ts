import { newId } from "../ids.ts";
import type { KeyedLock } from "../locks.ts";
import { planDeploy } from "../manifest/plan.ts";
import { withoutOwnSdk } from "../runtime/python/pip.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/records.ts";
import { type DeployResult, resultLines, webhookPath } from "../wire/deploy-result.ts";
import { applyPlan } from "./applier.ts";
import { commitDeploy } from "./commit.ts";
import { deployedConnections } from "./connections.ts";
import { checkFiles, type DeployInput, readManifest } from "./input.ts";
import { planNotes } from "./notes.ts";
import { planSteps } from "./plan-steps.ts";

/** What a deploy needs of the service. */
export interface DeployContext {
  stores: Stores;
  /** Its `check` compiles the build and resolves every `call` before anything is stored. */
  runtime: Runtime;
  secrets: SecretBox;
  locks: KeyedLock;
  /** Told after a project's configuration changed, so caches drop it. */
  changed(projectId: string): void;
}

/**
 * Plans and applies a deploy: project, vars, triggers, build, deployment, activation. All or
 * nothing: everything is checked first (manifest, files, Python), and the project's new
 * configuration is committed with one write. Deploys of one project run one at a time.
 * @example const result = await deploy(ctx, { manifest, manifest_file: "manifest.yaml", files });
 *   result.triggers.map((t) => t.webhook_path) // every trigger's path, new or kept
 */
export async function deploy(ctx: DeployContext, input: DeployInput): Promise<DeployResult> {
  const manifest = readManifest(input);
  const { files, size } = checkFiles(manifest, input.files);
  const name = manifest.project.name;
  return ctx.locks.run(`project:${name}`, async () => {
    const { stores, secrets } = ctx;
    const doc = await stores.projects.byName(name);
    const changes = planDeploy(doc, manifest, (s) => secrets.open(s));
    const progress: string[] = [];
    const build = { id: newId("bld"), files, size };
    const calls = manifest.triggers.flatMap((t) => (t.call ? [t.call] : []));
    // pip must not replace the service's SDK with AutoKitteh's: the runtime leaves those lines
    // out wherever it installs the build; the plan says which.
    const requirements = files["requirements.txt"];
    const own = withoutOwnSdk(
      requirements === undefined ? "" : Buffer.from(requirements, "base64").toString("utf8"),
    );
    await ctx.runtime.check(build, calls, (line) => progress.push(line));

    const now = new Date().toISOString();
    const applied = applyPlan({ doc, manifest, seal: (s) => secrets.seal(s), now }, changes);
    const { deploymentId, steps } = await commitDeploy(stores, applied, build, now);
    ctx.changed(applied.doc.project.id);

    const result = {
      project_id: applied.doc.project.id,
      deployment_id: deploymentId,
      plan: planSteps(name, changes),
      notes: planNotes(name, manifest, own.skipped),
      exec: [...applied.steps, ...steps],
      triggers: applied.doc.triggers.map((t) => ({
        id: t.id,
        name: t.name,
        webhook_id: t.webhook_id,
        webhook_path: t.webhook_id ? webhookPath(t.webhook_id) : "",
      })),
      connections: deployedConnections(applied.doc, (s) => secrets.open(s)),
      progress,
    };
    return { ...result, lines: resultLines(result) };
  });
}
