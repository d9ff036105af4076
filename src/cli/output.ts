import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import { attemptText } from "../wire/attempt-words.ts";
import type { JournalView } from "../wire/journal-view.ts";
import { BY_HAND } from "../wire/trigger-words.ts";

/**
 * Left-aligned columns two spaces apart; the last column is not padded.
 * @example table(["A", "B"], [["x", "y"]]) // ["A  B", "x  y"]
 */
export function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  return all.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/**
 * A duration in ms, short: `0.4ms`, `12ms`, `1.5s`.
 * @example shortDuration(1.23) // "1.2ms"
 */
export function shortDuration(ms: number): string {
  if (ms < 10) return `${Math.round(ms * 10) / 10}ms`;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return `${Math.round(ms / 100) / 10}s`;
}

function withoutNewline(text: string): string {
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

/**
 * One readable line for one session log entry, for `session log` and `session watch`.
 * @example formatEntry({ t: "…", kind: "outcome", status_code: 201, headers: {}, body: null, more: false, sent: true })
 * // "… outcome: 201 (final)"
 */
export function formatEntry(entry: SessionLogEntry): string {
  const e = entry;
  switch (e.kind) {
    case "print":
      return `${e.t} print${e.stream === "stderr" ? " (stderr)" : ""}: ${withoutNewline(e.text)}`;
    case "state":
      return `${e.t} state: ${e.state}${e.detail ? ` (${e.detail})` : ""}`;
    case "activity": {
      const result = e.ok ? "ok" : `error: ${e.error ?? "failed"}`;
      const tried = e.retry ? ` (${attemptText(e.retry, e.ok)})` : "";
      return `${e.t} activity: ${e.function} ${shortDuration(e.duration_ms)} ${result}${tried}${e.replayed ? " (replayed)" : ""}`;
    }
    case "outcome": {
      const kind = e.more ? "more" : e.sent ? "final" : "final, not sent";
      return `${e.t} outcome: ${e.status_code} (${kind})`;
    }
    case "warning":
      return `${e.t} warning: ${e.text}`;
    case "subscribe":
      return `${e.t} subscribe: ${e.source}${e.filter ? ` [${e.filter}]` : ""} -> ${e.subscription_id}`;
    case "event":
      return e.event_id
        ? `${e.t} event: ${e.event_id}${e.subscription_id ? ` (${e.subscription_id})` : ""}`
        : `${e.t} event: none (timeout)`;
    default: {
      // A kind this CLI does not know yet (for example a journal step): show it raw.
      const { t, kind, ...rest } = e as { t: string; kind: string };
      return `${t} ${kind}: ${JSON.stringify(rest)}`;
    }
  }
}

/** A durable session's journal step as the API shows it (the API's own view). */
export type JournalLine = JournalView;

/**
 * The journal section of `session log`: one line a step, with whether the latest run replayed
 * it (took its recorded value) or ran it live.
 * @example journalLines([{ seq: 0, kind: "activity", function: "h.f", ok: true, replayed: true }])
 * // ["journal:", "  #0 activity h.f ok (replayed)"]
 */
export function journalLines(steps: JournalLine[]): string[] {
  if (steps.length === 0) return [];
  return [
    "journal:",
    ...steps.map((s) => {
      const what = s.function ?? s.source ?? s.event_id ?? "";
      const status = s.retry_at
        ? `waiting to retry (attempt ${s.attempts ?? 1} failed; next at ${s.retry_at})`
        : `${s.ok ? "ok" : "error"}${s.attempts ? ` after ${s.attempts} attempts` : ""}`;
      return `  #${s.seq} ${s.kind}${what ? ` ${what}` : ""} ${status} (${s.replayed ? "replayed" : "live"})`;
    }),
  ];
}

/**
 * The lines that close a session's log: its error and traceback, when it ended in error.
 * @example sessionErrorLines({ state: "error", error: { message: "boom" } }) // ["error: boom"]
 */
export function sessionErrorLines(session: Pick<SessionRecord, "state" | "error">): string[] {
  if (session.state !== "error" || !session.error) return [];
  const lines = [`error: ${session.error.message}`];
  if (session.error.traceback) lines.push(withoutNewline(session.error.traceback));
  return lines;
}

/**
 * `session log`'s trace line when tracing was on for the session (docs/observability.md).
 * @example traceLines({ traceparent: "00-4bf9…4736-00f0…02b7-01" }) // ["trace 4bf9…4736"]
 */
export function traceLines(s: Pick<SessionRecord, "traceparent">): string[] {
  const traceId = s.traceparent?.split("-")[1];
  return traceId ? [`trace ${traceId}`] : [];
}

/**
 * The heading of `session log`: id, project, trigger, entry point and state.
 * @example sessionHeader(record) // "session ses_… demo/hook (handlers.py:on_hook) completed"
 */
export function sessionHeader(s: SessionRecord): string {
  const mode = [s.is_sync ? "sync" : "async", s.durable ? "durable" : ""]
    .filter(Boolean)
    .join(", ");
  const from = s.manual ? `${s.project_name} ${BY_HAND}` : `${s.project_name}/${s.trigger_name}`;
  const head = `session ${s.id} ${from} (${s.entry}, ${mode}) ${s.state}`;
  if (!s.rerun_of) return head;
  const reused = s.rerun_from_step ? `, its first ${s.rerun_from_step} steps reused` : "";
  return `${head}\nre-run of ${s.rerun_of}${reused}`;
}
