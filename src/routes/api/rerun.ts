import { HooklineError } from "../../errors.ts";
import type { SessionRecord, TriggerRecord } from "../../model/records.ts";
import type { IngestSource } from "../../sessions/ingest.ts";
import type { SessionManager } from "../../sessions/manager.ts";
import { rerunTrigger } from "../../sessions/manual.ts";
import type { Stores } from "../../storage/records.ts";

/**
 * Starts a new session from the stored event of session `id`: same trigger (by name), same
 * event, on the project's active deployment, so a fix deployed since runs. The event's
 * subscribers are not told again, and a synchronous trigger's outcome only goes to the log
 * (nobody holds the request).
 * @example const rec = await rerunSession(stores, sessions, "ses_…"); rec.state // "created"
 */
export async function rerunSession(
  stores: Stores,
  sessions: SessionManager,
  id: string,
): Promise<SessionRecord> {
  const old = sessions.live(id)?.record ?? (await stores.sessions.get(id));
  if (!old) throw new HooklineError("not_found", `session "${id}" not found`);
  const event = await stores.events.get(old.event_id);
  if (!event) {
    throw new HooklineError(
      "conflict",
      `the event of session "${id}" (${old.event_id}) is no longer stored, so it cannot be re-run`,
    );
  }
  const doc = await stores.projects.get(old.project_id);
  if (!doc) throw new HooklineError("conflict", `project "${old.project_name}" no longer exists`);
  // A run started by hand has no trigger: it runs its own entry point again.
  const trigger = old.manual
    ? rerunTrigger(doc, old, new Date().toISOString())
    : doc.triggers.find((t) => t.name === old.trigger_name);
  if (!trigger?.call) {
    throw new HooklineError(
      "conflict",
      `trigger "${old.trigger_name}" of project "${doc.project.name}" no longer starts sessions`,
    );
  }
  const depId = doc.project.active_deployment_id;
  const deployment = depId ? await stores.deployments.get(depId) : null;
  if (!deployment) {
    throw new HooklineError("conflict", `project "${doc.project.name}" has no active deployment`);
  }
  const { session } = await sessions.ingest({
    source: rerunSource(old, trigger, event.sdk_data !== undefined),
    doc,
    deployment: { id: deployment.id, buildId: deployment.build_id },
    event: { stored: event },
  });
  return session!;
}

/**
 * What a re-run goes in as: a session made by start() runs its own entry point again,
 * asynchronous, as durable as before, with its parent and memo; one started by hand is again a
 * manual run; any other is its trigger's.
 */
function rerunSource(old: SessionRecord, trigger: TriggerRecord, started: boolean): IngestSource {
  if (old.manual) return { kind: "manual", trigger };
  if (!started) return { kind: "rerun", trigger };
  return {
    kind: "rerun",
    trigger: { ...trigger, call: old.entry, is_sync: false, is_durable: old.durable },
    parentId: old.parent_id,
    memo: old.memo,
  };
}
