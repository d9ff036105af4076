import type { Logger } from "../log.ts";
import type { SessionFields } from "./observer.ts";

/** What a JSON line can learn about where it was logged; each part may be missing. */
export interface LogContext {
  /** The facts of a session running here, by id. */
  session(id: string): SessionFields | undefined;
  /** The span active where the line is logged (a request being served). */
  current(): { trace_id: string; span_id: string } | null;
}

const SESSION_ID = /\bses_[a-z0-9]{26}\b/;

/**
 * `SVC_LOG_FORMAT=json`: one JSON object a line, `{time, level, message}` plus, where they apply,
 * `session_id`, `project`, `trigger`, `trace_id`, `span_id` (a line that names a session gets
 * that session's facts and span; another logged while a request is served gets its span). An error's stack
 * goes in `error`. Messages are the same text the human lines carry, so they hold no secret.
 * @example const log = jsonLogger((l) => process.stderr.write(l), () => observer);
 */
export function jsonLogger(
  write: (line: string) => void,
  context: () => LogContext | null = () => null,
): Logger {
  const line = (level: string, message: string, err?: unknown) => {
    const ctx = context();
    const id = SESSION_ID.exec(message)?.[0];
    const session = id ? (ctx?.session(id) ?? { session_id: id }) : undefined;
    const span = ctx?.current();
    const out: Record<string, unknown> = {
      time: new Date().toISOString(),
      level,
      message,
      ...(span ?? {}),
      // A line that names a session carries that session's trace (a child session started
      // while its parent served a request has a trace of its own).
      ...session,
    };
    if (err instanceof Error) out.error = err.stack ?? err.message;
    write(`${JSON.stringify(out)}\n`);
  };
  return {
    info: (msg) => line("info", msg),
    warn: (msg) => line("warn", msg),
    error: (msg, err) => line("error", msg, err),
  };
}

/**
 * The service's log in the format `SVC_LOG_FORMAT` names: `text` (the default, src/log.ts's
 * human lines) or `json`.
 * @example const log = serviceLogger(settings.logFormat, write, () => observer);
 */
export function serviceLogger(
  format: "text" | "json",
  write: (line: string) => void,
  context: () => LogContext | null,
  text: (write: (line: string) => void) => Logger,
): Logger {
  return format === "json" ? jsonLogger(write, context) : text(write);
}
