import type { EventRecord, JournalStep, SessionEnd, SessionRecord } from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/records.ts";
import { backfill, type EventHistory } from "./backfill.ts";
import type { buildCache } from "./build-cache.ts";
import type { SessionContext } from "./context.ts";
import { createHost, type HostServices } from "./host.ts";
import { isPending, SessionJournal } from "./journal.ts";
import type { ProjectCache } from "./project-cache.ts";
import { openParts, openSteps, sealStep, sessionEnv } from "./session-env.ts";
import { sessionSpec } from "./session-record.ts";
import type { SessionWriter } from "./writer.ts";

export interface RunnerDeps {
  stores: Pick<Stores, "projects" | "journals">;
  /** The builds and projects sessions start with, read once (and the project again at a change). */
  cached: { builds: ReturnType<typeof buildCache>; projects: ProjectCache };
  runtime: Runtime;
  secrets: SecretBox;
  workflowTimeoutMs: number;
  /** Where a durable step is stored: with the session's next write. */
  writer: SessionWriter;
  /** What a running session's host answers from. */
  services: HostServices;
  /** Webhook events published since a time, on every instance (see backfill.ts); absent: none. */
  history?: EventHistory;
}

/**
 * One attempt of a session, from its stored parts to its process's end: the project and build,
 * the journal (read from storage for an adopted session), the subscriptions it holds open, the
 * environment, then the runtime's run with a host over the session's context.
 * @example const end = await runner.attempt(ctx, event, (detail) => setRunning(detail));
 */
export function sessionRunner(d: RunnerDeps) {
  /** A session's journal: steps opened (secrets) as read, sealed as stored by the writer. */
  function journal(record: SessionRecord, steps: JournalStep[]): SessionJournal {
    return new SessionJournal({
      durable: record.durable,
      steps: openSteps(d.secrets, steps),
      store: (step) => d.writer.journal(record.id, sealStep(d.secrets, step)),
      parts: partsReader(d, record.id),
    });
  }

  /**
   * Runs `ctx`'s session once; resolves with how its process ended (`stopped` when a stop came
   * first). `started`: its process has it (with what the log says of a replay); the process
   * begins the session once what it returns has resolved.
   */
  async function attempt(
    ctx: SessionContext,
    event: EventRecord,
    started: (detail?: string) => Promise<void> | undefined,
  ): Promise<SessionEnd> {
    const { record } = ctx;
    const { subscriptions } = d.services;
    let doc = await d.cached.projects.get(record.project_id);
    if (!doc) throw new Error(`project ${record.project_id} is gone`);
    // A token about to expire is refreshed first; the project read again from storage, not the cache.
    if (await d.services.oauth?.freshen(doc)) doc = (await d.stores.projects.get(doc.project.id))!;
    const build = await d.cached.builds.get(record.build_id);
    const adopted = !ctx.journal;
    if (!ctx.journal) {
      const steps = record.durable ? await d.stores.journals.list(record.id) : [];
      ctx.journal = journal(record, steps);
    }
    const replay = ctx.journal.begin();
    const reopened = ctx.journal.restoreSubscriptions(subscriptions, record.id, doc);
    if (adopted && d.history) {
      // Events published while nobody ran it (its owner died) reach it all the same.
      await backfill(d.history, subscriptions, ctx.journal, reopened);
    }
    if (ctx.stopRequested) return { state: "stopped" };
    // An activity waiting to retry is on record, but its attempts go on live.
    const replayed = replay.length - (replay.length && isPending(replay.at(-1)!) ? 1 : 0);
    record.replayed_steps = replayed;
    const detail = replayDetail(record, replayed);
    const { env, redact, mask, appKey } = sessionEnv(doc, d.secrets);
    ctx.redact = redact;
    // A resumed run prints none of the workflow code's prints its earlier runs logged (replayed
    // code, and live code after the last journaled step that ran before; not an activity's).
    const printed = replayed ? ctx.log.workflowPrints : 0;
    const spec = sessionSpec(record, event, env, replay, d.workflowTimeoutMs, printed);
    const persist = () => d.writer.persist(record.id);
    const { log, parkable, journal: steps } = ctx;
    const session = { record, log, doc, redact, mask, journal: steps, parkable, persist, appKey };
    // `running` once a process has it: until then it waits for a slot, still `created`.
    const host = createHost(session, d.services, () => started(detail));
    ctx.run = d.runtime.run(spec, build, host);
    const end = await ctx.run.done;
    // Steps still being stored (an outcome just before the end) belong to this run.
    await ctx.journal.settled();
    // A replay that stopped short of the journal took another path: the core decides it.
    const short = end.state === "completed" ? ctx.journal.unfinished() : null;
    return short ? { state: "error", message: short.message } : end;
  }

  /**
   * The run of `sessionId` died: gives up the waits (next_event, next_signal) it left pending,
   * so the run that replays it waits again and what comes meanwhile is kept for that one.
   */
  function abandonWaits(sessionId: string): void {
    d.services.subscriptions.abandonWaits(sessionId);
    d.services.sdk?.signals.abandonWait(sessionId);
  }

  return { journal, attempt, abandonWaits };
}

export type SessionRunner = ReturnType<typeof sessionRunner>;

/** Reads the parts of a recorded value kept apart from storage, opened, when a replay asks. */
function partsReader(d: Pick<RunnerDeps, "stores" | "secrets">, sessionId: string) {
  return async (step: JournalStep & { kind: "activity" }) => {
    const stored = await d.stores.journals.parts(sessionId, step.seq, step.apart?.parts ?? 0);
    return openParts(d.secrets, step.seq, stored);
  };
}

/** What a run that replays says in the session's log: a re-run's, or a resumed session's. */
function replayDetail(record: SessionRecord, replayed: number): string | undefined {
  if (!replayed) return undefined;
  return record.rerun_of && !record.started_at
    ? `re-run of ${record.rerun_of}: replaying ${replayed} of its journal steps`
    : `resumed: replaying ${replayed} journal steps`;
}
