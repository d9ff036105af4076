/** The management API described for clients: `GET /api/v1/openapi.json`. */

const problem = { $ref: "#/components/schemas/Problem" };
const ok = (description: string, schema: object = { type: "object" }) => ({
  description,
  content: { "application/json": { schema } },
});
const errors = {
  "400": { description: "Bad input", content: { "application/problem+json": { schema: problem } } },
  "401": {
    description: "Missing or wrong token",
    content: { "application/problem+json": { schema: problem } },
  },
  "404": { description: "Not found", content: { "application/problem+json": { schema: problem } } },
};
const path = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string" },
});
const query = (name: string, description: string) => ({
  name,
  in: "query",
  required: false,
  description,
  schema: { type: "string" },
});

export const openapi = {
  openapi: "3.1.0",
  info: {
    title: "Hookline management API",
    version: "1",
    description:
      "Projects, deployments, triggers, environments, vars, sessions and events. Outside dev mode every call needs `Authorization: Bearer <token>`. Errors are RFC 9457 problem+json.",
  },
  servers: [{ url: "/api/v1" }],
  components: {
    securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    schemas: {
      Problem: {
        type: "object",
        required: ["type", "title", "status", "detail"],
        properties: {
          type: { type: "string" },
          title: { type: "string" },
          status: { type: "integer" },
          detail: { type: "string" },
        },
      },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    "/deploy": {
      post: {
        summary: "Plan and apply a manifest with its files (all or nothing)",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["manifest", "files"],
                properties: {
                  manifest: { type: "string", description: "manifest.yaml text" },
                  manifest_file: { type: "string", description: "name used in error lines" },
                  files: {
                    type: "object",
                    additionalProperties: { type: "string", contentEncoding: "base64" },
                  },
                },
              },
            },
          },
        },
        responses: {
          "200": ok("The [plan]/[exec] lines and the new ids"),
          "422": errors["400"],
          ...errors,
        },
      },
    },
    "/projects": {
      get: { summary: "List projects", responses: { "200": ok("Projects"), ...errors } },
    },
    "/projects/{ref}": {
      get: {
        summary: "One project (by id or name) with its environment and triggers",
        parameters: [path("ref", "prj_… or project name")],
        responses: { "200": ok("The project"), ...errors },
      },
    },
    "/deployments": {
      get: {
        summary: "List deployments",
        parameters: [query("project", "id or name")],
        responses: { "200": ok("Deployments"), ...errors },
      },
    },
    "/triggers": {
      get: {
        summary: "List triggers and webhook paths",
        parameters: [query("project", "id or name")],
        responses: { "200": ok("Triggers"), ...errors },
      },
    },
    "/envs": {
      get: { summary: "List environments", responses: { "200": ok("Environments"), ...errors } },
    },
    "/envs/{env}/vars": {
      get: {
        summary: "List vars (secrets masked)",
        parameters: [path("env", "env_…, or project name")],
        responses: { "200": ok("Vars"), ...errors },
      },
    },
    "/envs/{env}/vars/{name}": {
      put: {
        summary: "Set a var or secret",
        parameters: [path("env", "env_…, or project name"), path("name", "var name")],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["value"],
                properties: { value: { type: "string" }, secret: { type: "boolean" } },
              },
            },
          },
        },
        responses: { "200": ok("The var, masked when secret"), ...errors },
      },
      delete: {
        summary: "Delete a var",
        parameters: [path("env", "env_…, or project name"), path("name", "var name")],
        responses: { "204": { description: "Deleted" }, ...errors },
      },
    },
    "/sessions": {
      get: {
        summary: "List sessions, newest first",
        parameters: [
          query("project", "id or name"),
          query("state", "created|running|completed|error|stopped"),
          query("limit", "1-10000"),
        ],
        responses: { "200": ok("Sessions"), ...errors },
      },
    },
    "/sessions/{id}": {
      get: {
        summary: "One session",
        parameters: [path("id", "ses_…")],
        responses: { "200": ok("The session"), ...errors },
      },
    },
    "/sessions/{id}/log": {
      get: {
        summary: "A session's log",
        parameters: [path("id", "ses_…")],
        responses: { "200": ok("Record and entries"), ...errors },
      },
    },
    "/sessions/{id}/prints": {
      get: {
        summary: "A session's prints",
        parameters: [path("id", "ses_…")],
        responses: { "200": ok("Prints"), ...errors },
      },
    },
    "/sessions/{id}/stop": {
      post: {
        summary: "Stop a session",
        parameters: [path("id", "ses_…")],
        responses: { "200": ok("The session"), ...errors },
      },
    },
    "/sessions/{id}/watch": {
      get: {
        summary: "Follow a session's log (server-sent events; `end` carries the final record)",
        parameters: [path("id", "ses_…")],
        responses: { "200": { description: "text/event-stream" }, ...errors },
      },
    },
    "/events": {
      get: {
        summary: "List events, newest first",
        parameters: [query("project", "id or name"), query("limit", "1-1000")],
        responses: { "200": ok("Events"), ...errors },
      },
    },
    "/events/{id}": {
      get: {
        summary: "One event",
        parameters: [path("id", "evt_…")],
        responses: { "200": ok("The event"), ...errors },
      },
    },
  },
};
