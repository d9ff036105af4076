import { Hono } from "hono";
import { HooklineError } from "../../errors.ts";
import type { Stores } from "../../storage/records.ts";
import { serve } from "../validate.ts";
import { api } from "./contract.ts";
import { findProject } from "./views.ts";

/** Stored webhook events, newest first. */
export function eventRoutes(stores: Stores) {
  const app = new Hono();
  serve(app, api.events, async (c, { query }) => {
    const project_id = query.project
      ? (await findProject(stores, query.project)).project.id
      : undefined;
    return c.json({ events: await stores.events.list({ project_id, limit: query.limit }) });
  });
  serve(app, api.event, async (c, { params }) => {
    const event = await stores.events.get(params.id);
    if (!event) throw new HooklineError("not_found", `event "${params.id}" not found`);
    return c.json({ event });
  });
  return app;
}
