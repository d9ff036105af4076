import { Hono } from "hono";
import { HooklineError } from "../errors.ts";
import type { ProjectKv } from "./project-kv.ts";
import type { Wire } from "./values.ts";

/**
 * A stored value as plain JSON for readers outside Python: an exact int as its digits (JSON
 * allows any length; readers that need exactness parse it so), a float as a number (NaN and
 * infinities as null), bytes and pickled objects left in their tagged form.
 * @example publicJson({ n: { $int: "18446744073709551616" } }) // '{"n":18446744073709551616}'
 */
export function publicJson(w: Wire): string {
  if (w === null || typeof w !== "object") return JSON.stringify(w);
  if (Array.isArray(w)) return `[${w.map(publicJson).join(",")}]`;
  const keys = Object.keys(w);
  if (keys.length === 1 && keys[0] === "$int" && typeof w.$int === "string") return w.$int;
  if (keys.length === 1 && keys[0] === "$float" && typeof w.$float === "string") {
    const x = Number(w.$float);
    return Number.isFinite(x) ? String(x) : "null";
  }
  return `{${keys.map((k) => `${JSON.stringify(k)}:${publicJson(w[k] as Wire)}`).join(",")}}`;
}

const PROJECT = ":project{prj_[a-z0-9]{26}}";

/**
 * The public side of `publish_value`: `GET <mount>/<project_id>` answers every published value
 * of the project as one JSON object, `GET <mount>/<project_id>/<key>` one value. No token: these
 * URLs are what `get_store_public_url()` hands out. A key that is absent or not published is a
 * 404 like an unknown project, so the route tells nothing about unpublished keys. Mount it at
 * `/store` (the path `storePublicUrl` builds); errors are thrown for the app's onError.
 * @example app.route("/store", storePublicRoutes(store));
 */
export function storePublicRoutes(store: ProjectKv): Hono {
  const app = new Hono();
  const json = (text: string) =>
    new Response(text, { headers: { "content-type": "application/json" } });
  app.get(`/${PROJECT}`, async (c) => {
    const values = await store.publishedValues(c.req.param("project"));
    return json(publicJson(values));
  });
  app.get(`/${PROJECT}/:key{.+}`, async (c) => {
    const key = c.req.param("key");
    const value = await store.published(c.req.param("project"), key);
    if (value === null) throw new HooklineError("not_found", "no published value there");
    return json(publicJson(value));
  });
  return app;
}
