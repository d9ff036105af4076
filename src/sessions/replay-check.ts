import type {
  BuildFiles,
  EventRecord,
  JournalStep,
  ProjectDoc,
  SessionRecord,
} from "../model/records.ts";
import type { Runtime, SessionHost, SessionSpec, StepReply } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import { contiguous, NonDeterminismError, SessionJournal } from "./journal.ts";
import { openParts, openSteps, sessionEnv } from "./session-env.ts";
import { sessionSpec } from "./session-record.ts";
import { serveStep } from "./steps.ts";

/** How long one replay check may take, at most, by default: a stuck handler is reported, not waited for. */
export const CHECK_TIMEOUT_MS = 10_000;

/**
 * What a replay check found: the code took every recorded step (`ok`), or it left the
 * journal's path at `step` (what the journal holds there against what the code does now), or
 * the check could not tell (`unknown`: it timed out, or its process died).
 */
export type ReplayVerdict = { ok: true } | Divergence;

/** Where the code left the journal's path: the step, what the journal holds, what the code does. */
export interface Divergence {
  ok: false;
  step: number;
  journal: string;
  code: string;
  /** The check could not tell: it timed out, or its process died. */
  unknown?: boolean;
}

export interface ReplayCheck {
  runtime: Runtime;
  build: BuildFiles;
  /** The checked session's spec: its event, env and entry; `journal` its steps (opened). */
  spec: SessionSpec;
  /** How many of the journal's steps the code must take; its step `upTo` is not judged. */
  upTo: number;
  timeoutMs?: number;
  /** Reads (opened) the parts of a recorded value kept apart; absent: none can be read. */
  parts?: (step: JournalStep & { kind: "activity" }) => Promise<string[]>;
}

/**
 * Replays a session's journal against a build without side effects: its Python process runs in
 * check mode (every activity asked for, never run; the network refused), every step is
 * answered from the journal, and the process is ended at the first step past `upTo`. Arguments
 * are compared too (the digest a live step recorded), which a resume does not do.
 * @example const verdict = await checkReplay({ runtime, build, spec, upTo: 7 }); // { ok: true }
 */
export async function checkReplay(c: ReplayCheck): Promise<ReplayVerdict> {
  if (c.upTo <= 0) return { ok: true }; // nothing on record to take
  const steps = c.spec.journal.slice(0, c.upTo);
  const journal = new SessionJournal({
    durable: true,
    steps,
    store: async () => {},
    ...(c.parts && { parts: c.parts }),
  });
  journal.begin();
  let taken = 0;
  let found: ReplayVerdict | null = null;
  let reached = false;
  const stop = () => void run.stop();
  const host: SessionHost = {
    started() {},
    print() {},
    activity() {},
    async step(req): Promise<StepReply> {
      const seq = req.seq ?? taken;
      if (seq >= c.upTo || req.kind === "retry") {
        // The first step past the journal (or a retry of its last one, which goes on live).
        reached = true;
        stop();
        return new Promise<StepReply>(() => {});
      }
      taken = Math.max(taken, seq + 1);
      const recorded = steps[seq];
      const same = req.kind === "activity" && recorded?.kind === "activity";
      if (same && recorded.function === req.function && otherArgs(req, recorded)) {
        const what = `activity ${recorded.function}`;
        found = diverged(seq, what, `${what} with other arguments`);
        stop();
        throw new Error(`step ${seq}: other arguments`);
      }
      try {
        return await serveStep(journal, req, () => null);
      } catch (e) {
        if (e instanceof NonDeterminismError) found = diverged(e.seq, label(steps[e.seq]), e.asked);
        throw e;
      }
    },
  };
  // Nobody waits for a check's answer: it takes a process after the held requests.
  const { held: _, ...checked } = c.spec;
  const spec: SessionSpec = { ...checked, durable: true, check: true, journal: steps };
  const run = c.runtime.run(spec, c.build, host);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, c.timeoutMs ?? CHECK_TIMEOUT_MS);
  const end = await run.done.finally(() => clearTimeout(timer));
  if (found) return found;
  if (reached || taken >= c.upTo) return { ok: true };
  const next = label(steps[taken]);
  if (timedOut) {
    const s = Math.round((c.timeoutMs ?? CHECK_TIMEOUT_MS) / 1000);
    return { ...diverged(taken, next, `nothing within ${s} s (timed out)`), unknown: true };
  }
  if (end.state === "completed") return diverged(taken, next, "returns");
  if (end.state === "error") return diverged(taken, next, `raises ${firstLine(end.message)}`);
  const why = end.state === "crashed" ? end.message : end.state;
  return { ...diverged(taken, next, `nothing: ${why}`), unknown: true };
}

/** A stored session to check: its record, event and journal (as stored), against a build. */
export interface CheckTarget {
  record: SessionRecord;
  event: EventRecord;
  /** Its journal steps as storage keeps them (sealed). */
  steps: JournalStep[];
  /** How many of them the code must take (the rest are not judged). */
  upTo: number;
  /** The build to check against, and the project as it would run it (its vars). */
  build: BuildFiles;
  doc: ProjectDoc;
  /** The stored (sealed) parts of step `seq`'s value kept apart (stores.journals.parts). */
  parts?: (seq: number, count: number) => Promise<string[]>;
}

/**
 * Checks a stored session's journal against a build and the project's vars (`checkReplay`),
 * as the session itself would run on them: its id, its event, its entry point.
 * @example await checkSession({ runtime, secrets }, { record, event, steps, upTo: 3, build, doc })
 */
export function checkSession(
  parts: { runtime: Runtime; secrets: SecretBox; timeoutMs?: number },
  t: CheckTarget,
): Promise<ReplayVerdict> {
  const steps = contiguous(openSteps(parts.secrets, t.steps));
  const { env } = sessionEnv(t.doc, parts.secrets);
  const timeoutMs = parts.timeoutMs ?? CHECK_TIMEOUT_MS;
  const record = { ...t.record, build_id: t.build.id };
  const spec = sessionSpec(record, t.event, env, steps, timeoutMs);
  const upTo = Math.min(t.upTo, steps.length);
  const read = t.parts;
  const opened = read
    ? async (step: JournalStep & { kind: "activity" }) =>
        openParts(parts.secrets, step.seq, await read(step.seq, step.apart?.parts ?? 0))
    : undefined;
  return checkReplay({
    runtime: parts.runtime,
    build: t.build,
    spec,
    upTo,
    timeoutMs,
    parts: opened,
  });
}

function diverged(step: number, journal: string, code: string): Divergence {
  return { ok: false, step, journal, code };
}

/** A live step's arguments against the journal's, when both have a digest. */
function otherArgs(req: { args?: string }, recorded: { args?: string }): boolean {
  return req.args !== undefined && recorded.args !== undefined && req.args !== recorded.args;
}

/**
 * A journal step in words, as the check's report names it.
 * @example label({ seq: 0, kind: "activity", function: "handlers.charge" }) // "activity handlers.charge"
 */
export function label(step: JournalStep | undefined): string {
  if (!step) return "nothing more";
  if (step.kind === "activity") return `activity ${step.function}`;
  if (step.kind === "subscribe") return `subscribe("${step.name}")`;
  return `${step.kind}()`;
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}
