import * as v from "valibot";
import { DeployInputSchema, DeployResultSchema } from "../../deploy/index.ts";
import { VarName } from "../../manifest/index.ts";
import { defineRoute } from "../validate.ts";
import { StoreValue, storeApi } from "./kv-contract.ts";
import { RERUN_SUMMARY, RerunFromQuery, replayApi } from "./retry-schemas.ts";
import { runApi } from "./run-contract.ts";
import {
  Connection,
  Deployment,
  Env,
  Event,
  JournalEntry,
  LogEntry,
  Problem,
  Project,
  Session,
  Trigger,
  Var,
} from "./schemas.ts";
import { sessionFilters } from "./session-filters.ts";

/**
 * The management API as one table: each route's method, path, parameters, query, body and
 * answers. The handlers are registered and validated from it (`serve`), and
 * `/api/v1/openapi.json` is generated from it (openapi.ts).
 */

/** The deploy answer: declared once, in src/wire/deploy-result.ts, where the CLI reads it too. */
export const DeployResponse = DeployResultSchema;

const ref = (description: string) =>
  v.pipe(v.string(), v.description(`${description}: an id or a project name`));
const sessionId = v.object({ id: v.pipe(v.string(), v.description("ses_…")) });
const envVar = v.object({
  env: ref("env_…, or the project"),
  name: v.pipe(v.string(), v.description("var name")),
});
const byProject = v.object({ project: v.optional(ref("only this project")) });

/** `limit` as a query string: a whole number from 1 to `max`. */
const limit = (max: number) => {
  const message = `must be a whole number from 1 to ${max}`;
  return v.optional(
    v.pipe(
      v.string(),
      v.digits(message),
      v.transform(Number),
      v.number(),
      v.integer(message),
      v.minValue(1, message),
      v.maxValue(max, message),
    ),
    "100",
  );
};

export const DeployBody = DeployInputSchema;

export const VarBody = v.object({
  value: v.pipe(v.string(), v.maxLength(64 * 1024)),
  secret: v.optional(v.boolean(), false),
});

const json = (description: string, schema: v.GenericSchema) => ({ 200: { description, schema } });

export const api = {
  deploy: defineRoute({
    method: "post",
    path: "/deploy",
    summary: "Plan and apply a manifest with its files (all or nothing)",
    body: DeployBody,
    ok: json("The plan, the steps carried out, every trigger's webhook path", DeployResponse),
    errors: [400, 409, 413, 422, 503],
  }),
  projects: defineRoute({
    method: "get",
    path: "/projects",
    summary: "List projects",
    ok: json("Projects", v.strictObject({ projects: v.array(Project) })),
    errors: [],
  }),
  project: defineRoute({
    method: "get",
    path: "/projects/{ref}",
    summary: "One project (by id or name) with its environment and triggers",
    params: v.object({ ref: ref("prj_…") }),
    ok: json(
      "The project",
      v.strictObject({ project: Project, env: Env, triggers: v.array(Trigger) }),
    ),
    errors: [404],
  }),
  deployments: defineRoute({
    method: "get",
    path: "/deployments",
    summary: "List deployments, newest first",
    query: byProject,
    ok: json("Deployments", v.strictObject({ deployments: v.array(Deployment) })),
    errors: [404],
  }),
  triggers: defineRoute({
    method: "get",
    path: "/triggers",
    summary: "List triggers and their webhook paths",
    query: byProject,
    ok: json("Triggers", v.strictObject({ triggers: v.array(Trigger) })),
    errors: [404],
  }),
  connections: defineRoute({
    method: "get",
    path: "/connections",
    summary: "List connections: integration, status (ready, or the vars it needs) and inbound path",
    query: byProject,
    ok: json("Connections", v.strictObject({ connections: v.array(Connection) })),
    errors: [404],
  }),
  envs: defineRoute({
    method: "get",
    path: "/envs",
    summary: "List environments",
    ok: json("Environments", v.strictObject({ envs: v.array(Env) })),
    errors: [],
  }),
  vars: defineRoute({
    method: "get",
    path: "/envs/{env}/vars",
    summary: "List an environment's vars (secrets masked)",
    params: v.object({ env: envVar.entries.env }),
    ok: json("Vars", v.strictObject({ env: Env, vars: v.array(Var) })),
    errors: [404],
  }),
  setVar: defineRoute({
    method: "put",
    path: "/envs/{env}/vars/{name}",
    summary: "Set a var or a secret",
    params: v.object({
      env: envVar.entries.env,
      name: v.pipe(
        VarName,
        v.description("var name: not PATH, nor starting with PYTHON, LD_ or SVC_ (400)"),
      ),
    }),
    body: VarBody,
    ok: json("The var, masked when secret", v.strictObject({ env: Env, var: Var })),
    errors: [400, 404],
  }),
  deleteVar: defineRoute({
    method: "delete",
    path: "/envs/{env}/vars/{name}",
    summary: "Delete a var",
    params: envVar,
    ok: { 204: { description: "Deleted" } },
    errors: [404],
  }),
  sessions: defineRoute({
    method: "get",
    path: "/sessions",
    summary: "List sessions, newest first",
    query: v.object({
      ...byProject.entries,
      ...sessionFilters.entries,
      limit: limit(10_000),
    }),
    ok: json(
      "Sessions, newest first; `more` says rows were left out (or, with `trigger` or `q`, may be), and then `next` is the `before` of the next page; `total` (the sessions listed) only when `more` is false: nothing is counted",
      v.strictObject({
        sessions: v.array(Session),
        more: v.boolean(),
        next: v.optional(v.pipe(v.string(), v.description("`before` for the next page"))),
        total: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
      }),
    ),
    errors: [400, 404],
  }),
  session: defineRoute({
    method: "get",
    path: "/sessions/{id}",
    summary: "One session",
    params: sessionId,
    ok: json("The session", v.strictObject({ session: Session })),
    errors: [404],
  }),
  sessionLog: defineRoute({
    method: "get",
    path: "/sessions/{id}/log",
    summary: "A session's log, and a durable session's journal",
    params: sessionId,
    ok: json(
      "The record, its log entries and journal steps",
      v.strictObject({
        session: Session,
        entries: v.array(LogEntry),
        journal: v.array(JournalEntry),
      }),
    ),
    errors: [404],
  }),
  sessionPrints: defineRoute({
    method: "get",
    path: "/sessions/{id}/prints",
    summary: "A session's prints",
    params: sessionId,
    ok: json(
      "Prints",
      v.strictObject({
        session_id: v.string(),
        state: Session.entries.state,
        prints: v.array(
          v.strictObject({
            t: v.string(),
            text: v.string(),
            stream: v.picklist(["stdout", "stderr"]),
          }),
        ),
      }),
    ),
    errors: [404],
  }),
  stopSession: defineRoute({
    method: "post",
    path: "/sessions/{id}/stop",
    summary: "Stop a session; answers once its process is gone",
    params: sessionId,
    ok: json("The session", v.strictObject({ session: Session })),
    errors: [404],
  }),
  rerunSession: defineRoute({
    method: "post",
    path: "/sessions/{id}/rerun",
    summary: RERUN_SUMMARY,
    params: sessionId,
    query: v.object({ from: v.optional(RerunFromQuery) }),
    ok: { 201: { description: "The new session", schema: v.strictObject({ session: Session }) } },
    errors: [400, 404, 409],
  }),
  watchSession: defineRoute({
    method: "get",
    path: "/sessions/{id}/watch",
    summary: "Follow a session's log as server-sent events; the `end` event carries the record",
    params: sessionId,
    ok: {
      200: {
        description: "One LogEntry per unnamed event, then an `end` event with the Session",
        contentType: "text/event-stream",
        extensions: {
          "x-events": {
            message: { $ref: "#/components/schemas/LogEntry" },
            end: { $ref: "#/components/schemas/Session" },
          },
        },
      },
    },
    errors: [404],
  }),
  events: defineRoute({
    method: "get",
    path: "/events",
    summary: "List events (webhook requests and schedule firings), newest first",
    query: v.object({ ...byProject.entries, limit: limit(1000) }),
    ok: json("Events", v.strictObject({ events: v.array(Event) })),
    errors: [400, 404],
  }),
  event: defineRoute({
    method: "get",
    path: "/events/{id}",
    summary: "One webhook event",
    params: v.object({ id: v.pipe(v.string(), v.description("evt_…")) }),
    ok: json("The event", v.strictObject({ event: Event })),
    errors: [404],
  }),
  openapi: defineRoute({
    method: "get",
    path: "/openapi.json",
    summary: "This document",
    public: true,
    ok: json("OpenAPI 3.1", v.looseObject({ openapi: v.literal("3.1.0") })),
    errors: [],
  }),
  ...storeApi,
  ...replayApi,
  ...runApi,
};

/** The named shapes, as `#/components/schemas/<name>` in the document. */
export const components = {
  Problem,
  Project,
  Env,
  Deployment,
  Trigger,
  Connection,
  Var,
  Session,
  LogEntry,
  JournalEntry,
  Event,
  DeployResult: DeployResponse,
  StoreValue,
};
