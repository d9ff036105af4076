import { Hono } from "hono";
import * as v from "valibot";
import { HooklineError } from "../../errors.ts";
import type { KeyedLock } from "../../locks.ts";
import { VarName } from "../../manifest/index.ts";
import type { SecretBox } from "../../secrets.ts";
import type { Stores } from "../../storage/stores.ts";
import { parseBody } from "../validate.ts";
import { envView, findEnv, varView } from "./views.ts";

const VarBody = v.object({
  value: v.pipe(v.string(), v.maxLength(64 * 1024)),
  secret: v.optional(v.boolean(), false),
});

/** The same rules as the manifest's `vars[].name`. */
function checkName(name: string) {
  const result = v.safeParse(VarName, name);
  if (!result.success) {
    throw new HooklineError("bad_request", `var name: ${result.issues[0].message}`);
  }
}

/** Environments and their vars. A change is one write of the project's document. */
export function envRoutes(
  stores: Stores,
  secrets: SecretBox,
  locks: KeyedLock,
  changed: (projectId: string) => void,
) {
  const app = new Hono();
  app.get("/envs", async (c) => {
    const docs = await stores.projects.list();
    return c.json({ envs: docs.map(envView) });
  });
  app.get("/envs/:env/vars", async (c) => {
    const doc = await findEnv(stores, c.req.param("env"));
    return c.json({ env: envView(doc), vars: doc.vars.map(varView) });
  });
  app.put("/envs/:env/vars/:name", async (c) => {
    const name = c.req.param("name");
    checkName(name);
    const body = await parseBody(c, VarBody);
    const { project } = await findEnv(stores, c.req.param("env"));
    const doc = await locks.run(`project:${project.name}`, async () => {
      const fresh = (await stores.projects.get(project.id))!;
      const rec = {
        env_id: fresh.env.id,
        name,
        value: body.secret ? secrets.seal(body.value) : body.value,
        secret: body.secret,
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
  app.delete("/envs/:env/vars/:name", async (c) => {
    const name = c.req.param("name");
    const { project } = await findEnv(stores, c.req.param("env"));
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
