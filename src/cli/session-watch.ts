import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import { clientFromEnv } from "./client.ts";
import { CliError, ExitError, type Io } from "./io.ts";
import { formatEntry, sessionErrorLines } from "./output.ts";

/**
 * Follows a session's log until it ends, as `session watch` prints it: each entry, then
 * `session <id>: <state>` and the error lines; an `error` end is exit code 1.
 * @example await printWatch(io, "ses_…")
 */
export async function printWatch(io: Io, id: string): Promise<void> {
  let end: SessionRecord | undefined;
  await clientFromEnv(io.env).events(
    `/api/v1/sessions/${encodeURIComponent(id)}/watch`,
    (event, data) => {
      if (event === "end") {
        end = JSON.parse(data) as SessionRecord;
        return "stop";
      }
      if (event === "message") io.out(formatEntry(JSON.parse(data) as SessionLogEntry));
      return undefined;
    },
  );
  if (!end) throw new CliError(`the stream of session ${id} closed before the session ended`);
  io.out(`session ${end.id ?? id}: ${end.state}`);
  for (const line of sessionErrorLines(end)) io.out(line);
  if (end.state === "error") throw new ExitError(1);
}
