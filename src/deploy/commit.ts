import { newId } from "../ids.ts";
import type { Stores } from "../storage/stores.ts";
import type { ExecStep } from "../wire/deploy-result.ts";
import type { AppliedPlan } from "./applier.ts";

export interface CheckedBuild {
  id: string;
  /** Normalised relative path → base64 content. */
  files: Record<string, string>;
  size: number;
}

/**
 * Stores an applied plan and activates it: the build, the deployment and the new webhook refs
 * first, then the project document (the one write that makes the deploy real), then tidy-up.
 * A failure before the project write leaves records nothing points to; one after it leaves
 * stale entries the routes ignore. Returns the steps it took and the deployment's id.
 * @example const { deploymentId, steps } = await commitDeploy(stores, applied, build, now);
 */
export async function commitDeploy(
  stores: Stores,
  applied: AppliedPlan,
  build: CheckedBuild,
  now: string,
): Promise<{ deploymentId: string; steps: ExecStep[] }> {
  const { doc } = applied;
  const deploymentId = newId("dep");
  const projectId = doc.project.id;
  const steps: ExecStep[] = [];
  await stores.builds.put({
    id: build.id,
    project_id: projectId,
    files: build.files,
    size: build.size,
    created_at: now,
  });
  steps.push({ op: "create_build", id: build.id, result: "created" });
  await stores.deployments.put({
    id: deploymentId,
    project_id: projectId,
    build_id: build.id,
    state: "active",
    created_at: now,
    updated_at: now,
  });
  steps.push({ op: "create_deployment", id: deploymentId, result: "created" });
  for (const rec of applied.created) {
    await stores.webhooks.put(rec.webhook_id, { project_id: projectId, trigger_id: rec.id });
  }
  const previous = doc.project.active_deployment_id;
  await stores.projects.put({
    ...doc,
    project: { ...doc.project, active_deployment_id: deploymentId },
  });
  steps.push({ op: "activate_deployment", id: deploymentId, result: "activated" });

  for (const rec of applied.deleted) await stores.webhooks.delete(rec.webhook_id);
  if (previous) {
    const old = await stores.deployments.get(previous);
    if (old) await stores.deployments.put({ ...old, state: "inactive", updated_at: now });
  }
  return { deploymentId, steps };
}
