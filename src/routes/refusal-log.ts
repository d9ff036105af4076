import { type Clock, systemClock } from "../clock.ts";
import type { Logger } from "../log.ts";

/** Refusal lines logged per connection in one window; the rest are only counted. */
export const REFUSALS_LOGGED = 10;
/** The window: it opens at a connection's first refusal; at its end the count left out is said. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Connections with a window open at once; past it, others share one window and one count. */
const MAX_OPEN = 1000;

export interface RefusalLog {
  /** One refused delivery of connection `key` (its id); `where` names it in the summary line. */
  refused(key: string, where: string, line: string): void;
}

interface Window {
  where: string;
  logged: number;
  left: number;
}

/**
 * The warnings of refused deliveries, bounded: a flood of forged requests to one connection
 * writes at most REFUSALS_LOGGED lines in REFUSAL_WINDOW_MS, then one line at the window's end
 * saying how many more there were. Each connection has its own window, so one under attack does
 * not hide another's refusals.
 * @example const refusals = createRefusalLog(log); refusals.refused(con.id, "connection p/c", "connection p/c: refused (401): …");
 */
export function createRefusalLog(
  log: Logger,
  clock: Clock = systemClock,
  limits = { lines: REFUSALS_LOGGED, windowMs: REFUSAL_WINDOW_MS },
): RefusalLog {
  const open = new Map<string, Window>();
  const seconds = limits.windowMs / 1000;

  function close(key: string) {
    const w = open.get(key);
    open.delete(key);
    if (!w?.left) return;
    log.warn(
      `${w.where}: ${w.left} more refused deliveries in the last ${seconds} s not logged (at most ${limits.lines} are, per connection)`,
    );
  }

  function windowOf(key: string, where: string): Window {
    let w = open.get(key);
    if (w) return w;
    // The shared window is the one more past MAX_OPEN.
    if (key !== "*" && open.size >= MAX_OPEN) return windowOf("*", "other connections");
    w = { where, logged: 0, left: 0 };
    open.set(key, w);
    clock.setTimeout(() => close(key), limits.windowMs);
    return w;
  }

  return {
    refused(key, where, line) {
      const w = windowOf(key, where);
      if (w.logged < limits.lines) {
        w.logged++;
        log.warn(line);
      } else {
        w.left++;
      }
    },
  };
}
