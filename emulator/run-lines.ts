import type { SessionRecord } from "../src/model/records.ts";

/** Prints shown under a session's line at most; the rest are counted, with where to read them. */
export const MAX_PRINTS_SHOWN = 20;
/** A print longer than this is cut in the terminal (the session keeps it whole). */
const MAX_PRINT_CHARS = 500;

/** The sessions of a running service as the dev terminal follows them. */
export interface RunWatch {
  onStarted(listener: (record: SessionRecord) => void): () => void;
  whenEnded(sessionId: string): Promise<SessionRecord | null>;
  /** An ended session's prints, read from storage in the process (not over HTTP). */
  prints(sessionId: string): Promise<string[]>;
}

/**
 * A duration as the terminal says it: milliseconds below a second, else seconds.
 * @example runDuration(42) // "42 ms"; runDuration(1530) // "1.5 s"
 */
export function runDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * The lines the dev terminal shows for one ended session: `[trigger] state in time  link`, its
 * prints indented beneath, and the last line of its error when it failed.
 * @example runLines(record, ["Hello, Ada!"], "http://127.0.0.1:9980")
 *   // ["[hello] completed in 42 ms  http://127.0.0.1:9980/ui/sessions/ses_…", "    Hello, Ada!"]
 */
export function runLines(record: SessionRecord, prints: string[], baseUrl: string): string[] {
  const from = Date.parse(record.started_at ?? record.created_at);
  const to = Date.parse(record.ended_at ?? record.updated_at);
  const name = record.trigger_name || (record.manual ? `run ${record.entry}` : record.entry);
  const link = `${baseUrl}/ui/sessions/${record.id}`;
  const lines = [`[${name}] ${record.state} in ${runDuration(to - from)}  ${link}`];
  for (const text of prints.slice(0, MAX_PRINTS_SHOWN)) {
    for (const line of text.split("\n")) {
      const cut = line.length > MAX_PRINT_CHARS ? `${line.slice(0, MAX_PRINT_CHARS)}…` : line;
      lines.push(`    ${cut}`);
    }
  }
  if (prints.length > MAX_PRINTS_SHOWN) {
    lines.push(`    … ${prints.length - MAX_PRINTS_SHOWN} more (cli session prints ${record.id})`);
  }
  if (record.state === "error" && record.error) {
    const last = (record.error.traceback ?? record.error.message)
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1);
    lines.push(`    error: ${last ?? record.error.message}`);
  }
  return lines;
}

/**
 * Follows the sessions that start on `sessions` and writes each one's lines (`runLines`) through
 * `out` when it ends, its prints read from the service's storage in the process: no request to
 * its own API, which would cost every session an HTTP round trip on the accept's event loop.
 * Returns a function that stops.
 * @example const stop = showRuns(service.sessions, service.url, io.out);
 */
export function showRuns(
  sessions: RunWatch,
  baseUrl: string,
  out: (line: string) => void,
): () => void {
  let stopped = false;
  const unlisten = sessions.onStarted((started) => {
    void sessions
      .whenEnded(started.id)
      .then(async (record) => {
        if (!record || stopped) return;
        const prints = await sessions.prints(record.id).catch(() => []);
        if (!stopped) for (const line of runLines(record, prints, baseUrl)) out(line);
      })
      .catch(() => {}); // the service is closing: nothing to show
  });
  return () => {
    stopped = true;
    unlisten();
  };
}
