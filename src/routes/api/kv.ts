import { Hono } from "hono";
import { HooklineError } from "../../errors.ts";
import type { ProjectKv } from "../../kv/project-kv.ts";
import type { Stores } from "../../storage/records.ts";
import { serve } from "../validate.ts";
import { api } from "./contract.ts";
import { findProject } from "./views.ts";

/**
 * A project's store from the API (`cli store …`): the same atomic operations, limits and wire
 * form as the SDK's `get_value` / `set_value` / `del_value` / `list_values_keys`.
 * @example api.route("/", storeRoutes(stores, store));
 */
export function storeRoutes(stores: Stores, store: ProjectKv) {
  const app = new Hono();
  const view = async (projectId: string, key: string) => {
    const value = await store.get(projectId, key);
    if (value === null) throw new HooklineError("not_found", `no value under "${key}"`);
    const published = (await store.published(projectId, key)) !== null;
    return { project_id: projectId, key, value, published };
  };
  serve(app, api.storeKeys, async (c, { params }) => {
    const { project } = await findProject(stores, params.project);
    return c.json({ project_id: project.id, keys: await store.listKeys(project.id) });
  });
  serve(app, api.storeGet, async (c, { params }) => {
    const { project } = await findProject(stores, params.project);
    return c.json(await view(project.id, params.key));
  });
  serve(app, api.storeSet, async (c, { params, body }) => {
    const { project } = await findProject(stores, params.project);
    if (body.value === null) throw new HooklineError("bad_request", "value: null; use DELETE");
    await store.set(project.id, params.key, body.value);
    return c.json(await view(project.id, params.key));
  });
  serve(app, api.storeDelete, async (c, { params }) => {
    const { project } = await findProject(stores, params.project);
    await store.del(project.id, params.key);
    return c.body(null, 204);
  });
  return app;
}
