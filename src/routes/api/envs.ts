import { Hono } from "hono";
import { HooklineError } from "../../errors.ts";
import type { KeyedLock } from "../../locks.ts";
import type { SecretBox } from "../../secrets.ts";
import type { Stores } from "../../storage/records.ts";
import { serve } from "../validate.ts";
import { api } from "./contract.ts";
import { envView, findEnv, varView } from "./views.ts";

/** Environments and their vars. A change is one write of the project's document. */
export function envRoutes(
  stores: Stores,
  secrets: SecretBox,
  locks: KeyedLock,
  changed: (projectId: string) => void,
) {
  const app = new Hono();
  serve(app, api.envs, async (c) => {
    const docs = await stores.projects.list();
    return c.json({ envs: docs.map(envView) });
  });
  serve(app, api.vars, async (c, { params }) => {
    const doc = await findEnv(stores, params.env);
    return c.json({ env: envView(doc), vars: doc.vars.map(varView) });
  });
  // The name follows the manifest's `vars[].name` rules (the route's params schema).
  serve(app, api.setVar, async (c, { params, body }) => {
    const { name } = params;
    const { project } = await findEnv(stores, params.env);
    const doc = await locks.run(`project:${project.name}`, async () => {
      const fresh = (await stores.projects.get(project.id))!;
      // The manifest's description says what the var is for, whoever sets its value.
      const description = fresh.vars.find((x) => x.name === name)?.description;
      const rec = {
        env_id: fresh.env.id,
        name,
        value: body.secret ? secrets.seal(body.value) : body.value,
        secret: body.secret,
        ...(description && { description }),
        source: "cli" as const,
        updated_at: new Date().toISOString(),
      };
      fresh.vars = [...fresh.vars.filter((x) => x.name !== name), rec];
      await stores.projects.put(fresh);
      return fresh;
    });
    changed(doc.project.id);
    return c.json({ env: envView(doc), var: varView(doc.vars.find((x) => x.name === name)!) });
  });
  serve(app, api.deleteVar, async (c, { params }) => {
    const { name } = params;
    const { project } = await findEnv(stores, params.env);
    await locks.run(`project:${project.name}`, async () => {
      const fresh = (await stores.projects.get(project.id))!;
      if (!fresh.vars.some((x) => x.name === name)) {
        throw new HooklineError("not_found", `var "${name}" not found in ${project.name}/default`);
      }
      fresh.vars = fresh.vars.filter((x) => x.name !== name);
      await stores.projects.put(fresh);
    });
    changed(project.id);
    return c.body(null, 204);
  });
  return app;
}
