import { Hono } from "hono";
import { HooklineError } from "../../errors.ts";
import type { Stores } from "../../storage/stores.ts";
import { findProject } from "./views.ts";

/** Stored webhook events, newest first. */
export function eventRoutes(stores: Stores) {
  const app = new Hono();
  app.get("/events", async (c) => {
    const ref = c.req.query("project");
    const project_id = ref ? (await findProject(stores, ref)).project.id : undefined;
    const limit = Number(c.req.query("limit") ?? "100");
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new HooklineError("bad_request", "limit must be a whole number from 1 to 1000");
    }
    return c.json({ events: await stores.events.list({ project_id, limit }) });
  });
  app.get("/events/:id", async (c) => {
    const event = await stores.events.get(c.req.param("id"));
    if (!event) throw new HooklineError("not_found", `event "${c.req.param("id")}" not found`);
    return c.json({ event });
  });
  return app;
}
