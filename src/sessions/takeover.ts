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
  if (rec.state !== "running" && rec.state !== "created") return "tidy";
  const neverStarted = rec.state === "created";
  if (neverStarted && rec.is_sync) return "never-started";
  if (rec.durable && hasEvent) return "resume";
  if (neverStarted && hasEvent) return "start";
  return "interrupt";
}
