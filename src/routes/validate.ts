import type { Context, Hono } from "hono";
import * as v from "valibot";
import { HooklineError } from "../errors.ts";

/**
 * The JSON body of a request, checked against `schema`; 400 naming the first bad field.
 * @example const body = await parseBody(c, v.object({ value: v.string() }));
 */
export async function parseBody<S extends v.GenericSchema>(
  c: Context,
  schema: S,
): Promise<v.InferOutput<S>> {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    throw new HooklineError("bad_request", "the request body is not JSON");
  }
  return check(schema, json, "body");
}

/** `value` checked against `schema`; a 400 naming the first bad field (or `where`) otherwise. */
function check<S extends v.GenericSchema>(schema: S, value: unknown, where: string) {
  const result = v.safeParse(schema, value);
  if (!result.success) {
    const issue = result.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join(".") || where;
    throw new HooklineError("bad_request", `${path}: ${issue.message}`);
  }
  return result.output as v.InferOutput<S>;
}

type Method = "get" | "post" | "put" | "delete";

/** One answer of a route: JSON described by `schema`, no body, or another media type. */
export interface Answer {
  description: string;
  schema?: v.GenericSchema;
  /** Default `application/json` when there is a schema. */
  contentType?: string;
  /** Vendor extension members copied into the document (the watch stream's event schemas). */
  extensions?: Record<string, unknown>;
}

/**
 * A route of the API as data: the handler is registered and its input validated from this, and
 * the OpenAPI document is generated from the same object.
 */
export interface RouteSpec {
  method: Method;
  /** OpenAPI style, `{name}` for a path parameter, relative to `/api/v1`. */
  path: string;
  summary: string;
  params?: v.ObjectSchema<v.ObjectEntries, undefined>;
  query?: v.ObjectSchema<v.ObjectEntries, undefined>;
  body?: v.GenericSchema;
  /** Success answers by status. */
  ok: Record<number, Answer>;
  /** Statuses answered with problem+json besides 401 (every route but the public ones). */
  errors: number[];
  /** No token needed. */
  public?: boolean;
}

type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : Record<string, never>;

/** What a handler gets, typed from its route's schemas. */
export interface RouteInput<R extends RouteSpec> {
  params: Out<R["params"]>;
  query: Out<R["query"]>;
  body: Out<R["body"]>;
}

/**
 * Keeps a route's literal types, so handlers see their input typed.
 * @example const one = defineRoute({ method: "get", path: "/events/{id}", summary: "One event",
 *   params: v.object({ id: v.string() }), ok: { 200: { description: "The event" } }, errors: [404] });
 */
export const defineRoute = <const R extends RouteSpec>(route: R): R => route;

/**
 * Registers `handler` for `route` on `app`, giving it the route's path parameters, query and
 * body parsed by the route's own schemas (a 400 naming the bad field otherwise).
 * @example serve(app, api.event, async (c, { params }) => c.json({ event: await get(params.id) }));
 */
export function serve<R extends RouteSpec>(
  app: Hono,
  route: R,
  handler: (c: Context, input: RouteInput<R>) => Response | Promise<Response>,
): void {
  const path = route.path.replaceAll(/\{(\w+)\}/g, ":$1");
  app.on(route.method.toUpperCase(), path, async (c) => {
    const input = {
      params: route.params ? check(route.params, c.req.param(), "path") : {},
      query: route.query ? check(route.query, c.req.query(), "query") : {},
      body: route.body ? await parseBody(c, route.body) : {},
    };
    return handler(c, input as RouteInput<R>);
  });
}
