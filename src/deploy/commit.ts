import { newId } from "../ids.ts";
import { atomicBatch, type StorageOp } from "../storage/drivers/batch.ts";
import { projectOps, type Stores } from "../storage/records.ts";
import type { ExecStep } from "../wire/deploy-result.ts";
import type { AppliedPlan } from "./applier.ts";

export interface CheckedBuild {
  id: string;
  /** Normalised relative path → base64 content. */
  files: Record<string, string>;
  size: number;
}

/**
 * Stores an applied plan and activates it in one commit (`atomicBatch`): the build, the
 * deployment, the new and removed webhook refs, the project document with its name entry, and
 * the previous deployment marked inactive. On lmdb, memory and redis a crash leaves all of it
 * or none; on fs-lite the writes go one after the other in that order, so a crash leaves
 * records nothing points to, never a project pointing at a missing build. Returns the steps it
 * took and the deployment's id.
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
  const previous = doc.project.active_deployment_id;
  const old = previous ? await stores.deployments.get(previous) : null;
  const ops: StorageOp[] = [
    {
      key: `builds:${build.id}`,
      value: {
        id: build.id,
        project_id: projectId,
        files: build.files,
        size: build.size,
        created_at: now,
      },
    },
    {
      key: `deployments:${deploymentId}`,
      value: {
        id: deploymentId,
        project_id: projectId,
        build_id: build.id,
        state: "active",
        created_at: now,
        updated_at: now,
      },
    },
  ];
  for (const rec of applied.created) {
    ops.push({
      key: `webhooks:${rec.webhook_id}`,
      value: { project_id: projectId, trigger_id: rec.id },
    });
  }
  for (const c of applied.inbound.created) {
    ops.push({
      key: `webhooks:${c.inbound_id}`,
      value: { project_id: projectId, trigger_id: "", connection: c.name },
    });
  }
  for (const id of applied.inbound.released) ops.push({ key: `webhooks:${id}`, value: null });
  ops.push(
    ...projectOps({ ...doc, project: { ...doc.project, active_deployment_id: deploymentId } }),
  );
  for (const rec of applied.deleted) ops.push({ key: `webhooks:${rec.webhook_id}`, value: null });
  if (old)
    ops.push({
      key: `deployments:${old.id}`,
      value: { ...old, state: "inactive", updated_at: now },
    });
  await atomicBatch(stores.storage, ops);
  return {
    deploymentId,
    steps: [
      { op: "create_build", id: build.id, result: "created" },
      { op: "create_deployment", id: deploymentId, result: "created" },
      { op: "activate_deployment", id: deploymentId, result: "activated" },
    ],
  };
}
