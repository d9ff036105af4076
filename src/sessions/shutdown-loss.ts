import type { SessionEnd } from "../model/records.ts";

/**
 * A run stopped by the service's own shutdown (not by a user's stop) counts as a process lost to
 * it: a durable session is left to resume at the next start, another ends "interrupted".
 * @example shutdownLoss({ state: "stopped" }, true).state // "crashed"
 */
export function shutdownLoss(end: SessionEnd, byShutdown: boolean): SessionEnd {
  if (end.state !== "stopped" || !byShutdown) return end;
  return { state: "crashed", message: "the service stopped" };
}
