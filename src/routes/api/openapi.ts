import { type ConversionConfig, toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { RouteSpec } from "../validate.ts";
import { api, components } from "./contract.ts";

/**
 * `GET /api/v1/openapi.json`, generated from the route table (contract.ts): the same valibot
 * schemas that validate requests, and those that describe the answers.
 */

type Json = Record<string, unknown>;

const ERROR_TITLES: Record<number, string> = {
  400: "Bad input",
  401: "Missing or wrong token",
  404: "Not found",
  413: "Too large",
  422: "Unprocessable (a manifest or files that do not validate)",
  503: "Unavailable (Python cannot be prepared)",
};

/**
 * `check` cannot be said in JSON Schema (its rule stays in the validator), and query strings
 * are described by the number they become, so the conversion skips the pipe's string half.
 */
function config(mode: "input" | "output"): ConversionConfig {
  return {
    target: "draft-2020-12",
    typeMode: mode,
    definitions: components,
    ignoreActions: ["check"],
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  };
}

/** One schema as the document shows it: named shapes as references, no `$schema`. */
function jsonSchema(schema: v.GenericSchema, mode: "input" | "output" = "output"): Json {
  const { $schema: _, $defs: __, ...rest } = toJsonSchema(schema, config(mode)) as Json;
  return rest;
}

function parameters(route: RouteSpec): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ["path", route.params],
    ["query", route.query],
  ] as const) {
    if (!schema) continue;
    const object = jsonSchema(schema) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      const { description, ...rest } = property;
      out.push({
        name,
        in: where,
        required: where === "path" || (object.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: where === "query" && typeof rest.default === "string" ? withNumber(rest) : rest,
      });
    }
  }
  return out;
}

/** A query default is given as its text ("100"); the document shows the value it becomes. */
function withNumber(schema: Json): Json {
  const n = Number(schema.default);
  return schema.type === "integer" && Number.isInteger(n) ? { ...schema, default: n } : schema;
}

const problem = (status: number) => ({
  description: ERROR_TITLES[status] ?? `Error ${status}`,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

function operation(id: string, route: RouteSpec): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(route.ok)) {
    const type = answer.contentType ?? "application/json";
    responses[status] = {
      description: answer.description,
      ...(answer.schema || answer.contentType
        ? { content: { [type]: answer.schema ? { schema: jsonSchema(answer.schema) } : {} } }
        : {}),
      ...answer.extensions,
    };
  }
  for (const status of [...route.errors, ...(route.public ? [] : [401])].sort()) {
    responses[status] = problem(status);
  }
  const params = parameters(route);
  return {
    operationId: id,
    summary: route.summary,
    ...(route.public ? { security: [] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(route.body, "input") } },
          },
        }
      : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document for `routes` (default: the whole API).
 * @example const doc = openapiDocument(); doc.paths["/projects"].get.responses["200"]
 */
export function openapiDocument(routes: Record<string, RouteSpec> = api) {
  const paths: Record<string, Record<string, Json>> = {};
  for (const [id, route] of Object.entries(routes)) {
    paths[route.path] ??= {};
    paths[route.path]![route.method] = operation(id, route);
  }
  const { definitions: _, ...rest } = config("output");
  const schemas = toJsonSchemaDefs(components, rest);
  return {
    openapi: "3.1.0",
    info: {
      title: "Hookline management API",
      version: "1",
      description:
        "Projects, deployments, triggers, environments, vars, sessions and events. Outside dev " +
        "mode every call needs `Authorization: Bearer <token>`. Errors are RFC 9457 " +
        "problem+json. Generated from the service's own request and response schemas.",
    },
    servers: [{ url: "/api/v1" }],
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } }, schemas },
    paths,
  };
}

/** Built once: the routes do not change while the service runs. */
export const openapi = openapiDocument();
