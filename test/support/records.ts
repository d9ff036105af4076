import type {
  EventRecord,
  ProjectDoc,
  SessionRecord,
  TriggerRecord,
} from "../../src/model/records.ts";

/** A fixed time for records built by tests. */
export const T = "2025-06-01T12:00:00.000Z";

/**
 * A complete session record for tests, with whatever they care about overridden.
 * @example sessionRecord({ state: "running", project_id: "prj_x" })
 */
export function sessionRecord(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: "ses_01",
    project_id: "prj_01",
    project_name: "demo",
    deployment_id: "dep_01",
    build_id: "bld_01",
    trigger_id: "trg_01",
    trigger_name: "hook",
    event_id: "evt_01",
    entry: "handlers.py:on_hook",
    durable: false,
    is_sync: false,
    state: "completed",
    error: null,
    attempts: 0,
    created_at: T,
    started_at: T,
    ended_at: T,
    updated_at: T,
    ...over,
  };
}

/**
 * A complete event record for tests (a webhook's, with empty data), overridden as they need.
 * @example eventRecord({ id: newId("evt"), project_id: "prj_x" })
 */
export function eventRecord(over: Partial<EventRecord> = {}): EventRecord {
  return {
    id: "evt_01",
    project_id: "prj_01",
    trigger_id: "trg_01",
    trigger_name: "hook",
    webhook_id: "w",
    event_type: "post",
    data: {} as EventRecord["data"],
    session_id: null,
    created_at: T,
    ...over,
  };
}

/**
 * A webhook trigger named `name` (`trg_<name>`, `wh_<name>`, `handlers.py:<name>`) of project
 * `prj_1`, with `over` on top.
 */
export function triggerRecord(name: string, over: Partial<TriggerRecord> = {}): TriggerRecord {
  return {
    id: `trg_${name}`,
    project_id: "prj_1",
    name,
    type: "webhook",
    webhook_id: `wh_${name}`,
    event_type: "",
    call: `handlers.py:${name}`,
    is_sync: false,
    is_durable: false,
    filter: "",
    created_at: T,
    updated_at: T,
    ...over,
  };
}

/** A project `prj_1` of one connection `name` of `integration`, and nothing else. */
export function oneConnectionProject(name: string, integration: string): ProjectDoc {
  const at = new Date().toISOString();
  return {
    project: { id: "prj_1", name: "p", created_at: at, updated_at: at },
    env: { id: "env_1", project_id: "prj_1", name: "default" },
    triggers: [],
    vars: [],
    connections: [
      { id: "con_1", name, integration, inbound_id: "", created_at: at, updated_at: at },
    ],
  } as unknown as ProjectDoc;
}
