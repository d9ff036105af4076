import { RunGone } from "../events/subscriptions.ts";
import type { JournalStep } from "../model/records.ts";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";
import { isPending, type SessionJournal } from "./journal.ts";
import { refusal } from "./python-errors.ts";

/** The reply a recorded step gives when a replay asks for it again. */
function replayReply(step: JournalStep, parts?: string[]): StepReply {
  if (step.kind !== "activity" && "error" in step && step.error !== undefined) {
    return { ok: false, error: step.error, message: step.message ?? "" };
  }
  if (step.kind === "subscribe") return { ok: true, value: step.value };
  if (step.kind === "next_event") return { ok: true, value: step.value ?? null };
  if (step.kind === "activity") return { ok: true, value: step, ...(parts && { parts }) };
  if ("value" in step) return { ok: true, value: step.value ?? null };
  return { ok: true, value: null };
}

/** What the journal records for a request: its performed value, or its refusal. */
function stepOf(req: StepRequest, seq: number, reply: StepReply): JournalStep {
  const no = reply.ok ? {} : { error: reply.error, message: reply.message };
  switch (req.kind) {
    case "subscribe":
      return reply.ok
        ? {
            seq,
            kind: "subscribe",
            name: req.name,
            filter: req.filter,
            value: reply.value as string,
          }
        : { seq, kind: "subscribe", name: req.name, filter: req.filter, ...no };
    case "next_event":
      return { seq, kind: "next_event", value: reply.ok ? reply.value : null, ...no };
    case "unsubscribe":
      return { seq, kind: "unsubscribe", id: req.id, ...no };
    case "sleep":
      return { seq, kind: "sleep", ...no };
    case "outcome":
      return { seq, kind: "outcome" };
    case "activity": {
      const step: JournalStep = { seq, kind: "activity", function: req.function };
      if (req.result != null) step.result = req.result;
      if (req.error != null) step.error = req.error;
      if (req.args !== undefined) step.args = req.args;
      if (req.attempts !== undefined) step.attempts = req.attempts;
      if (req.apart) Object.assign(step, { apart: req.apart, parts: req.parts });
      return step;
    }
    case "retry":
      throw new Error("a retry is not a step of its own: its activity's step records it");
    default:
      return reply.ok
        ? { seq, kind: req.kind, value: reply.value }
        : { seq, kind: req.kind, ...no };
  }
}

/** What a step is named by for the non-determinism check. */
function nameOf(req: StepRequest): string | undefined {
  if (req.kind === "activity") return req.function;
  if (req.kind === "subscribe") return req.name;
  return undefined;
}

/**
 * Serves one step the core's way: numbers it, answers it from the journal when a replay asks
 * for a recorded step, else runs `perform` (its throw becomes a refusal, which is a step too: the
 * runtime counted it, and a replay raises it again), records the step (durable sessions) and
 * only then resolves with the reply. `perform` is called before anything awaits, so an outcome
 * keeps its place among the prints. Rejects when the session cannot go on.
 * @example const reply = await serveStep(journal, { kind: "sleep", ms: 10 }, async () => null);
 */
export async function serveStep(
  journal: SessionJournal,
  req: StepRequest,
  perform: (req: StepRequest, seq: number) => unknown,
): Promise<StepReply> {
  if (req.kind === "retry") throw new Error("a retry is served by serveRetry (retries.ts)");
  if (req.kind === "activity" && !journal.durable) {
    throw new Error("an activity step in a non-durable session");
  }
  const seq = journal.number(req.seq);
  const recorded = journal.durable ? journal.recorded(seq, req.kind, nameOf(req)) : null;
  // A retried activity's last attempt ends the step its pending record (replayed) keeps open.
  const ends =
    req.kind === "activity" && (req.result != null || req.error != null || req.apart != null);
  if (recorded && !(ends && isPending(recorded))) {
    return replayReply(recorded, await journal.partsOf(recorded));
  }
  if (req.kind === "activity" && !ends) {
    // A replay asked for a record the journal does not have: the runtime must not run it.
    throw new Error(`step ${seq}: no activity ${req.function} on record to replay`);
  }
  if (req.kind === "outcome" || req.kind === "activity") {
    // Nothing to wait for: on the journal's chain at once, so a run that ends right after
    // (its process killed) still finds the step stored before it resumes.
    await Promise.all([
      perform(req, seq),
      journal.record(stepOf(req, seq, { ok: true, value: null })),
    ]);
    return { ok: true, value: null };
  }
  let reply: StepReply;
  try {
    reply = { ok: true, value: await perform(req, seq) };
  } catch (e) {
    // A wait whose run is gone records nothing: the run that replays the session waits again.
    if (e instanceof RunGone) throw e;
    reply = refusal(e);
  }
  await journal.record(stepOf(req, seq, reply));
  return reply;
}
