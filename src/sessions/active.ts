import { compileFilter } from "../events/filter.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { JournalStep, Outcome, ProjectDoc, SessionRecord } from "../model/records.ts";
import type { SessionRun } from "../runtime/runtime.ts";
import { MASK, type SecretBox } from "../secrets.ts";
import type { SessionLog } from "./session-log.ts";

/** What a held synchronous request gets: the final outcome, the session's end, or a timeout. */
export type OutcomeWait =
  | { kind: "outcome"; outcome: Outcome }
  | { kind: "ended"; session: SessionRecord }
  | { kind: "timeout" };

/** A session this instance is running (or holding parked): its state in memory. */
export interface Active {
  record: SessionRecord;
  log: SessionLog;
  run: SessionRun | null;
  final: Outcome | null;
  waiters: Set<(w: OutcomeWait) => void>;
  stopRequested: boolean;
  /** Writes of this session's record and log, in order. */
  writes: Promise<unknown>;
  flushTimer: NodeJS.Timeout | null;
  /**
   * Set while a durable session waits (next_event, a timer) without a process: it was evicted,
   * and `wake` resumes it by replay once the wait's result is journaled.
   */
  parked: { wake: Promise<void>; resolve: () => void } | null;
  /** Masks the session's secret values out of prints and errors. */
  redact: (text: string) => string;
  /**
   * A durable session's journal as far as this instance knows it; null until read from storage
   * (a session adopted after a restart). A new session starts with an empty one: no read.
   */
  journal: JournalStep[] | null;
}

export const now = () => new Date().toISOString();

/** Secret values shorter than this are not masked in prints: too likely to match other text. */
const MIN_REDACTED = 4;

/**
 * A session's environment (vars, secrets opened) and the redaction of its secret values.
 * @example const { env, redact } = sessionEnv(doc, secrets); redact("token=s3cret") // "token=********"
 */
export function sessionEnv(doc: ProjectDoc, secrets: SecretBox) {
  const env: Record<string, string> = {};
  const values: string[] = [];
  for (const v of doc.vars) {
    const value = v.secret ? secrets.open(v.value) : v.value;
    env[v.name] = value;
    if (v.secret && value.length >= MIN_REDACTED) values.push(value);
  }
  // Longest first, so a secret that contains another is masked whole.
  values.sort((a, b) => b.length - a.length);
  const redact = values.length
    ? (text: string) => values.reduce((t, s) => t.replaceAll(s, MASK), text)
    : (text: string) => text;
  return { env, redact };
}

/** Resolves at `until` (epoch ms); long waits are chained, as timers top out near 24.8 days. */
export function sleepUntil(until: number): Promise<void> {
  return new Promise((resolve) => {
    const tick = () => {
      const left = until - Date.now();
      if (left <= 0) return resolve();
      setTimeout(tick, Math.min(left, 2 ** 31 - 1));
    };
    tick();
  });
}

/** The steps up to the first gap: a step stored after a later one was lost in a crash. */
export function contiguous(steps: JournalStep[]): JournalStep[] {
  const out: JournalStep[] = [];
  for (const step of steps) {
    if (step.seq !== out.length) break;
    out.push(step);
  }
  return out;
}

/** Re-registers, under their recorded ids, the subscriptions a journal holds open. */
export function restoreSubscriptions(
  subscriptions: Subscriptions,
  record: SessionRecord,
  doc: ProjectDoc,
  journal: JournalStep[],
) {
  const open = new Map<string, { name: string; filter: string }>();
  for (const step of journal) {
    if (step.kind === "subscribe" && step.value) open.set(step.value, step);
    if (step.kind === "unsubscribe") open.delete(step.id);
  }
  for (const [id, { name, filter }] of open) {
    if (!doc.triggers.some((t) => t.name === name)) continue;
    const compiled = filter ? compileFilter(filter) : null;
    subscriptions.add(record.id, `${record.project_id}:${name}`, compiled, id);
  }
}
