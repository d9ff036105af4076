import type { JournalStep } from "../model/records.ts";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";
import type { SessionJournal } from "./journal.ts";

type RetryRequest = Extract<StepRequest, { kind: "retry" }>;

/**
 * Serves a `retry` step: attempt `attempt` of durable activity step `seq` failed and its retry
 * policy tries again after `ms`. The step is recorded pending (the attempt, its error, the
 * deadline) before anything waits, so a resume (after a park, a restart, on another instance)
 * knows how many attempts were made and when the next is due; the deadline of an attempt
 * already on record stands (a resumed wait waits only for what is left). Resolves once the
 * deadline has passed (`wait`, which may park the session); the attempt then runs live.
 * @example await serveRetry(journal, { kind: "retry", seq: 3, function: "f", attempt: 1, ms: 1000, error }, Date.now(), wait);
 */
export async function serveRetry(
  journal: SessionJournal,
  req: RetryRequest,
  now: number,
  wait: (until: number) => Promise<void>,
): Promise<StepReply> {
  if (!journal.durable) throw new Error("a retry step in a non-durable session");
  const was = journal.retrying(req.seq, req.function);
  let until = was?.kind === "activity" && was.attempts === req.attempt ? was.retry_at : undefined;
  if (until === undefined) {
    until = now + req.ms;
    const step: JournalStep = {
      seq: req.seq,
      kind: "activity",
      function: req.function,
      error: req.error,
      attempts: req.attempt,
      retry_at: Math.round(until),
    };
    await journal.record(step);
  }
  await wait(until);
  return { ok: true, value: null };
}
