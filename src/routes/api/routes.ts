import { Hono } from "hono";
import type { ProjectKv } from "../../kv/project-kv.ts";
import type { keyedLock } from "../../locks.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import type { SecretBox } from "../../secrets.ts";
import type { SessionManager } from "../../sessions/manager.ts";
import type { Stores } from "../../storage/records.ts";
import { bearerToken } from "../auth.ts";
import { serve } from "../validate.ts";
import { api as routes } from "./contract.ts";
import { envRoutes } from "./envs.ts";
import { eventRoutes } from "./events.ts";
import { storeRoutes } from "./kv.ts";
import { openapi } from "./openapi.ts";
import { projectRoutes } from "./projects.ts";
import { sessionRoutes } from "./sessions.ts";

/** What a change of a project (a deploy, a var) is made with. */
export interface ProjectChanges {
  /** Checks a build before it is deployed. */
  runtime: Runtime;
  /** Seals secret values. */
  secrets: SecretBox;
  /** Serialises the changes of one project. */
  locks: ReturnType<typeof keyedLock>;
  /** Told of each change, so that what was cached of the project goes (here and elsewhere). */
  changed: (projectId: string) => void;
}

/** What the management API reads and changes. */
export interface ApiDeps {
  stores: Stores;
  sessions: SessionManager;
  kv: ProjectKv;
  projects: ProjectChanges;
  /** Required on every route but the OpenAPI document unless undefined (dev mode). */
  apiToken?: string;
}

/**
 * The management API (mounted at `/api/v1`): the bearer token on every route but the OpenAPI
 * document, when a token is set (none: dev mode).
 * @example app.route("/api/v1", apiRoutes({ stores, sessions, kv, projects, apiToken }));
 */
export function apiRoutes(p: ApiDeps): Hono {
  const api = new Hono();
  if (p.apiToken)
    api.use(
      "*",
      bearerToken(p.apiToken, (path) => path.endsWith("/openapi.json")),
    );
  const { stores } = p;
  const { runtime, secrets, locks, changed } = p.projects;
  serve(api, routes.openapi, (c) => c.json(openapi));
  api.route("/", projectRoutes(stores, { stores, runtime, secrets, locks, changed }));
  api.route("/", envRoutes(stores, secrets, locks, changed));
  api.route("/", sessionRoutes(stores, p.sessions));
  api.route("/", eventRoutes(stores));
  api.route("/", storeRoutes(stores, p.kv));
  return api;
}
