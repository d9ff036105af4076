/**
 * The API's views of triggers, connections, vars, store values and errors as its clients read
 * them: one definition for the CLI (and any client), checked against the API's own schemas
 * (src/routes/api/wire-views.test.ts: every answer the API may give is one of these). A field
 * an older service leaves out is optional here. The web UI shows its own rows, derived from the
 * records (`TriggerRow`, `ConnectionRow`, `VarRow` in src/ui/data.ts).
 */

/** `GET /triggers`: one trigger. */
export interface TriggerView {
  id: string;
  project: string;
  name: string;
  webhook_path: string;
  event_type: string;
  call: string | null;
  is_sync: boolean;
  is_durable: boolean;
  /** Absent from services older than schedule triggers: a webhook. */
  type?: "webhook" | "schedule" | "connection";
  schedule?: string | null;
  timezone?: string | null;
  next_fire?: string | null;
  /** False for triggers of connections that deliver no events here. */
  active?: boolean;
  /** Present (true) only on a trigger with `reuse_process: true`. */
  reuse_process?: boolean;
}

/** `GET /connections`: one connection, its status as a state and what it needs. */
export interface ConnectionView {
  id: string;
  project: string;
  name: string;
  integration: string;
  status: { state: "ready" | "needs" | "no_events"; needs: string[] };
  inbound_path: string;
}

/** `GET /envs/{env}/vars`: one var; a secret's value is `********`. */
export interface VarView {
  name: string;
  value: string;
  secret: boolean;
  source: string;
  /** Absent from services older than descriptions. */
  description?: string;
}

/** `GET`/`PUT /projects/{p}/store/{key}`: one value of a project's store, in the SDK's wire form. */
export interface StoreValueView {
  project_id: string;
  key: string;
  value: unknown;
  published: boolean;
}

/** RFC 9457 problem details (`application/problem+json`), as every error leaves the service. */
export interface ProblemView {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extra: string]: unknown;
}
