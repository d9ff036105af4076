import { HooklineError } from "../../errors.ts";
import type {
  EventRecord,
  JournalStep,
  ProjectDoc,
  SessionRecord,
  TriggerRecord,
} from "../../model/records.ts";
import type { IngestSource } from "../../sessions/ingest.ts";
import { contiguous } from "../../sessions/journal.ts";
import type { SessionManager, StartInput } from "../../sessions/manager.ts";
import { rerunTrigger } from "../../sessions/manual.ts";
import type { Stores } from "../../storage/records.ts";
import { stepFailed } from "../../wire/journal-view.ts";

/** Where a re-run starts: from the start (the whole handler), the failed step, or step N. */
export type RerunFrom = { failure: true } | { step: number };

/**
 * A re-run's start as the API's `from` gives it (checked by its schema: "failure" or digits).
 * @example rerunFrom("7") // { step: 7 }
 */
export function rerunFrom(from: string | undefined): RerunFrom | undefined {
  if (from === undefined) return undefined;
  return from === "failure" ? { failure: true } : { step: Number(from) };
}

/**
 * Starts a new session from the stored event of session `id`: same trigger (by name), same
 * event, on the project's active deployment, so a fix deployed since runs. The event's
 * subscribers are not told again, and a synchronous trigger's outcome only goes to the log
 * (nobody holds the request). `from` (a durable session that ended): the new session replays
 * the old one's journal up to the failed step (or step N), its results reused and nothing of
 * it run again, then runs live on the current code; refused (409) when that code leaves the
 * journal's path before there.
 * @example const rec = await rerunSession(stores, sessions, "ses_…", { failure: true });
 */
export async function rerunSession(
  stores: Stores,
  sessions: SessionManager,
  id: string,
  from?: RerunFrom,
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
  const replay = from
    ? await reusedSteps(stores, sessions, { old, event, doc, buildId: deployment.build_id, from })
    : undefined;
  const { session } = await sessions.ingest({
    source: rerunSource(old, trigger, event.sdk_data !== undefined, replay),
    doc,
    deployment: { id: deployment.id, buildId: deployment.build_id },
    event: { stored: event },
  });
  return session!;
}

/**
 * What a re-run goes in as: a session made by start() runs its own entry point again,
 * asynchronous, as durable as before, with its parent and memo; one started by hand is again a
 * manual run; any other is its trigger's. `rerun`: from a step, the journal it reuses.
 */
function rerunSource(
  old: SessionRecord,
  trigger: TriggerRecord,
  started: boolean,
  rerun?: StartInput["rerun"],
): IngestSource {
  // From a step it is durable whatever its trigger is now: it replays a journal.
  const again = rerun ? { ...trigger, is_durable: true } : trigger;
  if (old.manual) return { kind: "manual", trigger: again, rerun };
  if (!started) return { kind: "rerun", trigger: again, rerun };
  return {
    kind: "rerun",
    trigger: { ...again, call: old.entry, is_sync: false, is_durable: old.durable },
    parentId: old.parent_id,
    memo: old.memo,
    rerun,
  };
}

interface Rerun {
  old: SessionRecord;
  event: EventRecord;
  doc: ProjectDoc;
  buildId: string;
  from: RerunFrom;
}

/**
 * The old session's journal steps a re-run from a step reuses (as stored), once the current
 * code has been checked to take them as recorded; a clear refusal otherwise.
 */
async function reusedSteps(stores: Stores, sessions: SessionManager, r: Rerun) {
  const { old, from } = r;
  const refuse = (why: string) => new HooklineError("conflict", `session "${old.id}" ${why}`);
  if (!old.durable) {
    throw refuse(
      "is not durable: it keeps no journal to re-run from; re-run it whole (without --from-failure or --from-step)",
    );
  }
  if (!old.ended_at) throw refuse(`has not ended (${old.state}): stop it first, or let it end`);
  if ("failure" in from && old.state !== "error") {
    throw refuse(
      `ended in ${old.state}, not error: --from-failure re-runs a failed session (--from-step N re-runs from any step)`,
    );
  }
  const steps = contiguous(await stores.journals.list(old.id));
  const upTo = "failure" in from ? failedStep(steps) : from.step;
  if (!Number.isInteger(upTo) || upTo < 0 || upTo > steps.length) {
    throw new HooklineError(
      "bad_request",
      `step ${upTo}: session "${old.id}" has ${steps.length} journal steps; re-run from 0 to ${steps.length}`,
    );
  }
  const build = await stores.builds.get(r.buildId);
  if (!build) throw new HooklineError("conflict", `build ${r.buildId} is no longer stored`);
  const parts = (seq: number, count: number) => stores.journals.parts(old.id, seq, count);
  const target = { record: old, event: r.event, steps, upTo, doc: r.doc, build, parts };
  const verdict = await sessions.checkReplay(target);
  if (!verdict.ok) {
    const unsure = verdict.unknown ? "could not be checked" : "diverges";
    throw refuse(
      `cannot be re-run from step ${upTo} on deployment ${r.doc.project.active_deployment_id}: the current code ${unsure} at step ${verdict.step} (the journal has ${verdict.journal}; the code ${verdict.code})`,
    );
  }
  // A value kept apart is copied with its step, still sealed, under the new session's journal.
  const reused = steps
    .slice(0, upTo)
    .map(async (s) =>
      s.kind === "activity" && s.apart ? { ...s, parts: await parts(s.seq, s.apart.parts) } : s,
    );
  return { of: old.id, steps: await Promise.all(reused) };
}

/**
 * The step a failed session failed at: its last step when that one failed (an activity's
 * error, a refused request, an activity still waiting to retry), else the step after its
 * journal (the handler raised in its own code, past every step on record).
 * @example failedStep([{ seq: 0, kind: "sleep" }, { seq: 1, kind: "activity", function: "f", error: "…" }]) // 1
 */
export function failedStep(steps: JournalStep[]): number {
  const last = steps.at(-1);
  const failed = last !== undefined && stepFailed(last);
  return failed ? last.seq : steps.length;
}
