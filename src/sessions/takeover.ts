import type { SessionRecord } from "../model/records.ts";

/**
 * What becomes of a session nobody runs, once an instance takes it over (after a restart, or
 * its owner died or stopped): one that never started starts (a synchronous one ends instead,
 * its request gone with its instance), a durable one resumes from its journal, any other that
 * had started ends in `error` ("interrupted"), and one already ended only needs tidying.
 * @example takeoverOf(record, event !== null) // "resume"
 */
export type Takeover = "start" | "resume" | "never-started" | "interrupt" | "tidy";

export function takeoverOf(rec: SessionRecord, hasEvent: boolean): Takeover {
  if (rec.state === "created") {
    // Never started, durable or not: it runs from its start, once.
    if (rec.is_sync) return "never-started";
    return hasEvent ? "start" : "interrupt";
  }
  if (rec.state !== "running") return "tidy";
  return rec.durable && hasEvent ? "resume" : "interrupt";
}
