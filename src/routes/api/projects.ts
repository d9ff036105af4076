import { Hono } from "hono";
import { type DeployContext, deploy } from "../../deploy/index.ts";
import { replayReports } from "../../deploy/replay-check.ts";
import { HooklineError } from "../../errors.ts";
import type { Stores } from "../../storage/records.ts";
import { serve } from "../validate.ts";
import { api } from "./contract.ts";
import { connectionView, envView, findProject, triggerView } from "./views.ts";

/** Projects, their deployments and triggers, and deploy itself. */
export function projectRoutes(stores: Stores, deployCtx: DeployContext) {
  const app = new Hono();
  serve(app, api.deploy, async (c, { body }) => {
    return c.json(await deploy(deployCtx, body)); // DeployResultSchema's shape
  });
  serve(app, api.projects, async (c) => {
    const docs = await stores.projects.list();
    return c.json({ projects: docs.map((d) => d.project) });
  });
  serve(app, api.project, async (c, { params }) => {
    const doc = await findProject(stores, params.ref);
    return c.json({
      project: doc.project,
      env: envView(doc),
      triggers: doc.triggers.map((t) => triggerView(doc, t)),
    });
  });
  serve(app, api.replayCheck, async (c, { params }) => {
    const doc = await findProject(stores, params.ref);
    const report = await replayReports(stores.storage).get(doc.project.id);
    if (!report) {
      throw new HooklineError(
        "not_found",
        `project "${doc.project.name}" has no replay check yet (cli deploy --check-replay makes one)`,
      );
    }
    return c.json({ replay_check: report });
  });
  serve(app, api.deployments, async (c, { query }) => {
    const ref = query.project;
    const projects = ref ? [await findProject(stores, ref)] : await stores.projects.list();
    const lists = await Promise.all(
      projects.map((d) => stores.deployments.listByProject(d.project.id)),
    );
    return c.json({ deployments: lists.flat() });
  });
  serve(app, api.triggers, async (c, { query }) => {
    const ref = query.project;
    const projects = ref ? [await findProject(stores, ref)] : await stores.projects.list();
    return c.json({ triggers: projects.flatMap((d) => d.triggers.map((t) => triggerView(d, t))) });
  });
  serve(app, api.connections, async (c, { query }) => {
    const ref = query.project;
    const projects = ref ? [await findProject(stores, ref)] : await stores.projects.list();
    const open = (s: string) => deployCtx.secrets.open(s);
    return c.json({
      connections: projects.flatMap((d) =>
        (d.connections ?? []).map((x) => connectionView(d, x, open)),
      ),
    });
  });
  return app;
}
