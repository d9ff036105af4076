import { Hono } from "hono";
import { type DeployContext, DeployInputSchema, deploy } from "../../deploy/index.ts";
import type { Stores } from "../../storage/stores.ts";
import { parseBody } from "../validate.ts";
import { envView, findProject, triggerView } from "./views.ts";

/** Projects, their deployments and triggers, and deploy itself. */
export function projectRoutes(stores: Stores, deployCtx: DeployContext) {
  const app = new Hono();
  app.post("/deploy", async (c) => {
    const body = await parseBody(c, DeployInputSchema);
    return c.json(await deploy(deployCtx, body)); // DeployResultSchema's shape
  });
  app.get("/projects", async (c) => {
    const docs = await stores.projects.list();
    return c.json({ projects: docs.map((d) => d.project) });
  });
  app.get("/projects/:ref", async (c) => {
    const doc = await findProject(stores, c.req.param("ref"));
    return c.json({
      project: doc.project,
      env: envView(doc),
      triggers: doc.triggers.map((t) => triggerView(doc, t)),
    });
  });
  app.get("/deployments", async (c) => {
    const ref = c.req.query("project");
    const projects = ref ? [await findProject(stores, ref)] : await stores.projects.list();
    const lists = await Promise.all(
      projects.map((d) => stores.deployments.listByProject(d.project.id)),
    );
    return c.json({ deployments: lists.flat() });
  });
  app.get("/triggers", async (c) => {
    const ref = c.req.query("project");
    const projects = ref ? [await findProject(stores, ref)] : await stores.projects.list();
    return c.json({ triggers: projects.flatMap((d) => d.triggers.map((t) => triggerView(d, t))) });
  });
  return app;
}
