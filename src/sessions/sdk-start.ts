import * as v from "valibot";
import { HooklineError } from "../errors.ts";
import type { EventRecord, ProjectDoc, SessionRecord, TriggerRecord } from "../model/records.ts";
import type { IngestRequest } from "./ingest.ts";

/** Bytes of a start()'s `data` as JSON, as a webhook body's default limit. */
export const MAX_START_DATA = 1024 * 1024;
/** Bytes of a start()'s `memo` as JSON. */
export const MAX_MEMO = 16 * 1024;

const jsonSize = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

export const StartFields = v.object({
  loc: v.string(),
  data: v.pipe(
    v.optional(v.record(v.string(), v.unknown()), {}),
    v.check(
      (d) => jsonSize(d) <= MAX_START_DATA,
      `over the limit of ${MAX_START_DATA} bytes of JSON`,
    ),
  ),
  memo: v.pipe(
    v.optional(v.record(v.string(), v.string()), {}),
    v.check((m) => jsonSize(m) <= MAX_MEMO, `over the limit of ${MAX_MEMO} bytes of JSON`),
  ),
  project: v.optional(v.string(), ""),
});
export type StartFields = v.InferOutput<typeof StartFields>;

/** The webhook shape of an event that came from no request (one made by `start()`). */
const NO_REQUEST: EventRecord["data"] = {
  method: "",
  raw_url: "",
  url: { path: "", query: {}, path_suffix: "" },
  headers: {},
  body: { bytes: "", text: null, json: null, form: null },
};

/** `project=""` or this project's own name (or id): anything else is refused at the call. */
export function checkProject(project: string, doc: ProjectDoc): void {
  if (project === "" || project === doc.project.name || project === doc.project.id) return;
  throw new HooklineError(
    "bad_request",
    `start: sessions start only in their own project ("${doc.project.name}"); project "${project}" is not it (use project="")`,
  );
}

/**
 * What goes in for the child of `parent` at `loc`: an event of type "start" carrying `data`
 * (wire form, `sdk_data`), for the parent's trigger with `loc` as its call, asynchronous and as
 * durable as the parent, on the parent's deployment.
 * @example const req = childStart(parent, doc, { loc: "jobs.py:run", data: {}, memo: {}, project: "" }, now);
 */
export function childStart(
  parent: SessionRecord,
  doc: ProjectDoc,
  f: StartFields,
  now: string,
): IngestRequest {
  const own = doc.triggers.find((t) => t.id === parent.trigger_id);
  const trigger: TriggerRecord = {
    id: parent.trigger_id,
    project_id: parent.project_id,
    name: parent.trigger_name,
    type: "webhook",
    webhook_id: own?.webhook_id ?? "",
    event_type: "",
    filter: "",
    created_at: own?.created_at ?? now,
    updated_at: own?.updated_at ?? now,
    call: f.loc,
    is_sync: false,
    is_durable: parent.durable,
    ...(parent.pickle_values && { pickle_values: true }),
  };
  return {
    source: { kind: "start", trigger, parentId: parent.id, memo: f.memo },
    doc,
    deployment: { id: parent.deployment_id, buildId: parent.build_id },
    event: {
      type: "start",
      data: NO_REQUEST,
      sdk_data: f.data,
      webhook_id: trigger.webhook_id,
      at: now,
    },
  };
}
