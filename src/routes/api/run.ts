import type { Hono } from "hono";
import { HooklineError } from "../../errors.ts";
import type { SessionRecord } from "../../model/records.ts";
import { checkLoc } from "../../sessions/entry-points.ts";
import type { SessionManager } from "../../sessions/manager.ts";
import { type ManualRunFields, manualRun } from "../../sessions/manual.ts";
import type { Stores } from "../../storage/records.ts";
import { serve } from "../validate.ts";
import { api } from "./contract.ts";
import { findProject } from "./views.ts";

/** A project's active deployment with its build, or 409 when it has none. */
async function activeBuild(stores: Stores, ref: string) {
  const doc = await findProject(stores, ref);
  const depId = doc.project.active_deployment_id;
  const deployment = depId ? await stores.deployments.get(depId) : null;
  const build = deployment ? await stores.builds.get(deployment.build_id) : null;
  if (!deployment || !build) {
    throw new HooklineError("conflict", `project "${doc.project.name}" has no active deployment`);
  }
  return { doc, deployment, build };
}

/**
 * Starts a session of project `ref` by hand, as AutoKitteh's `ak session start` does: the
 * entry point must be a top-level function of a file of the active deployment (else 400, and
 * nothing is stored); its event's `data` is `inputs`. Asynchronous; durable when asked.
 * @example const rec = await startManualRun(stores, sessions, "demo", { entrypoint: "program.py:main", inputs: {}, durable: false });
 */
export async function startManualRun(
  stores: Stores,
  sessions: Pick<SessionManager, "ingest">,
  ref: string,
  fields: ManualRunFields,
): Promise<SessionRecord> {
  const { doc, deployment, build } = await activeBuild(stores, ref);
  checkLoc(fields.entrypoint, build, "entrypoint");
  const at = { id: deployment.id, buildId: deployment.build_id };
  const { session } = await sessions.ingest(manualRun(doc, at, fields, new Date().toISOString()));
  return session!;
}

/**
 * `POST /projects/{project}/sessions`: a session started by hand (see startManualRun).
 * @example runRoute(app, stores, sessions)
 */
export function runRoute(app: Hono, stores: Stores, sessions: Pick<SessionManager, "ingest">) {
  serve(app, api.startSession, async (c, { params, body }) =>
    c.json({ session: await startManualRun(stores, sessions, params.project, body) }, 201),
  );
}
