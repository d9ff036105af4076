import { HooklineError } from "../errors.ts";
import { newId } from "../ids.ts";
import type { KeyedLock } from "../locks.ts";
import { planDeploy } from "../manifest/plan.ts";
import type { BuildFiles, ProjectDoc } from "../model/records.ts";
import { withoutOwnSdk } from "../runtime/python/pip.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/records.ts";
import {
  type DeployResult,
  type PlanNote,
  resultLines,
  webhookPath,
} from "../wire/deploy-result.ts";
import { type ReplayReport, replayLines } from "../wire/replay-report.ts";
import { applyPlan } from "./applier.ts";
import { commitDeploy } from "./commit.ts";
import { deployedConnections } from "./connections.ts";
import { checkFiles, type DeployInput, readManifest } from "./input.ts";
import { planNotes } from "./notes.ts";
import { planSteps } from "./plan-steps.ts";
import { checkDeployReplay, inFlightDurable, replayReports } from "./replay-check.ts";

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
    // Before anything is stored: the new code against the project's durable sessions.
    const replay = await replayFirst(ctx, input, doc, applied.doc, build);
    const { deploymentId, steps } = await commitDeploy(stores, applied, build, now);
    ctx.changed(applied.doc.project.id);
    if (replay.report) {
      await replayReports(stores.storage).put(applied.doc.project.id, {
        ...replay.report,
        deployment_id: deploymentId,
      });
    }

    const result = {
      project_id: applied.doc.project.id,
      deployment_id: deploymentId,
      plan: planSteps(name, changes),
      notes: [...planNotes(name, manifest, own.skipped), ...replay.notes],
      exec: [...applied.steps, ...steps],
      triggers: applied.doc.triggers.map((t) => ({
        id: t.id,
        name: t.name,
        webhook_id: t.webhook_id,
        webhook_path: t.webhook_id ? webhookPath(t.webhook_id) : "",
      })),
      connections: deployedConnections(applied.doc, (s) => secrets.open(s)),
      progress,
      ...(replay.report && { replay_check: { ...replay.report, deployment_id: deploymentId } }),
    };
    return { ...result, lines: resultLines(result) };
  });
}

/**
 * `check_replay`: the new build replayed against the project's durable sessions; one in flight
 * that diverges stops the deploy here (409, its report kept for the UI), unless `force`.
 * Without it: a note when durable sessions are in flight, unchecked.
 */
async function replayFirst(
  ctx: DeployContext,
  input: DeployInput,
  current: ProjectDoc | null,
  next: ProjectDoc,
  build: BuildFiles,
): Promise<{ report?: ReplayReport; notes: PlanNote[] }> {
  const { name, id } = next.project;
  if (input.check_replay === undefined) {
    const n = current ? await inFlightDurable(ctx.stores, id) : 0;
    if (n === 0) return { notes: [] };
    const text = `${n} durable session${n === 1 ? "" : "s"} in flight, not replayed against the new code (cli deploy --check-replay checks them first)`;
    return { notes: [{ kind: "sessions", subject: name, text }] };
  }
  const ended = input.check_replay;
  const opts = { next, build, ended, force: input.force ?? false };
  const report = await checkDeployReplay(ctx, opts);
  if (report.outcome !== "stopped") return { report, notes: [] };
  await replayReports(ctx.stores.storage).put(id, report);
  const n = report.diverging.filter((d) => d.in_flight && !d.unknown).length;
  throw new HooklineError(
    "conflict",
    [
      `deploy stopped, nothing changed: ${n} in-flight durable session${n === 1 ? "" : "s"} of "${name}" diverge${n === 1 ? "s" : ""} from the new code (--force deploys anyway)`,
      ...replayLines(report),
    ].join("\n"),
    { replay_check: report },
  );
}
