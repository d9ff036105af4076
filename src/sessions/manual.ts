import * as v from "valibot";
import type { ProjectDoc, SessionRecord, TriggerRecord } from "../model/records.ts";
import type { IngestRequest } from "./ingest.ts";

// A session started by hand, as AutoKitteh's `ak session start --entrypoint file.py:fn` starts
// one: no trigger, the chosen entry point, inputs as `event.data`. It goes in through `ingest`
// like every other source (kind "manual"); the route and the UI check the entry point first.

/** Bytes of a manual run's inputs as JSON, as a webhook body's default limit. */
export const MAX_INPUTS = 1024 * 1024;
/** The event type of a manual run's event. */
export const MANUAL_EVENT = "manual";

/** What a manual run is asked with (the API's body; the CLI and the UI send the same). */
export const ManualRunFields = v.object({
  entrypoint: v.pipe(v.string(), v.description("<file.py>:<function> of the active deployment")),
  inputs: v.pipe(
    v.optional(
      v.pipe(
        // Checked before the record, which would take an array too (as {"0": …}).
        v.unknown(),
        v.check(
          (x) => typeof x === "object" && x !== null && !Array.isArray(x),
          "must be a JSON object: name → value",
        ),
        v.record(
          v.pipe(v.string(), v.minLength(1, "an input's name must not be empty")),
          v.unknown(),
        ),
      ),
      {},
    ),
    v.check(
      (x) => Buffer.byteLength(JSON.stringify(x)) <= MAX_INPUTS,
      `over the limit of ${MAX_INPUTS} bytes of JSON`,
    ),
    v.description(
      "a JSON object, name → any JSON value: the session's event.data ({} when left out)",
    ),
  ),
  durable: v.pipe(
    v.optional(v.boolean(), false),
    v.description("run as a durable session (journaled, resumed after a restart)"),
  ),
});
export type ManualRunFields = v.InferOutput<typeof ManualRunFields>;

/**
 * What stands for the trigger a manual run has none of: id and name "", the entry point as its
 * call, asynchronous, pickling activity values as the project's manifest version says.
 * @example manualTrigger(doc, "program.py:on_manual_run", false, now).call // "program.py:on_manual_run"
 */
export function manualTrigger(
  doc: ProjectDoc,
  entry: string,
  durable: boolean,
  now: string,
  pickle = pickles(doc),
): TriggerRecord {
  return {
    id: "",
    project_id: doc.project.id,
    name: "",
    type: "webhook",
    webhook_id: "",
    event_type: "",
    filter: "",
    call: entry,
    is_sync: false,
    is_durable: durable,
    ...(pickle && { pickle_values: true }),
    created_at: now,
    updated_at: now,
  };
}

/**
 * Whether the project's manifest pickles activity values (`version: v2`): as recorded, or for
 * a project deployed before the version was kept, as its triggers do.
 */
function pickles(doc: ProjectDoc): boolean {
  const version = doc.project.manifest_version;
  return version ? version === "v2" : doc.triggers.some((t) => t.pickle_values === true);
}

/**
 * The ingest request of a manual run of `entry` (checked already) on a deployment.
 * @example await sessions.ingest(manualRun(doc, { id, buildId }, fields, now));
 */
export function manualRun(
  doc: ProjectDoc,
  deployment: { id: string; buildId: string },
  f: ManualRunFields,
  now: string,
): IngestRequest {
  return {
    source: { kind: "manual", trigger: manualTrigger(doc, f.entrypoint, f.durable, now) },
    doc,
    deployment,
    event: { type: MANUAL_EVENT, data: f.inputs, at: now },
  };
}

/**
 * What stands for the trigger when a manual session is re-run: its own entry point,
 * durability and pickling again.
 * @example rerunTrigger(doc, old, now).call === old.entry // true
 */
export function rerunTrigger(doc: ProjectDoc, old: SessionRecord, now: string): TriggerRecord {
  return manualTrigger(doc, old.entry, old.durable, now, old.pickle_values === true);
}
