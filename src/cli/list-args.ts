/** `session list`'s time arguments and its notice of rows left out. */
import { UsageError } from "./io.ts";

/**
 * The stderr line `session list` adds when the service left rows out (`more`), with the total
 * when the service counted it (it does not per state).
 * @example listNotice(100, { more: true, total: 2345 }) // "showing 100 of 2,345; more with --limit N"
 */
export function listNotice(
  shown: number,
  answer: { more?: boolean; total?: number },
): string | null {
  if (!answer.more) return null;
  const n = (x: number) => x.toLocaleString("en-US");
  return answer.total !== undefined
    ? `showing ${n(shown)} of ${n(answer.total)}; more with --limit N`
    : `showing the newest ${n(shown)}; more with --limit N`;
}

/**
 * A `--since` / `--until` value as an ISO time: ISO-8601 as given, or an age before `now`
 * (`90s`, `30m`, `2h`, `7d`).
 * @example timeArg("2h", "since", Date.parse("2026-12-06T04:00:00Z")) // "2026-12-06T02:00:00.000Z"
 */
export function timeArg(value: string, flag: string, now = Date.now()): string {
  const age = /^(\d+)(s|m|h|d)$/.exec(value);
  if (age) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2] as "s"];
    return new Date(now - Number(age[1]) * unit).toISOString();
  }
  if (Number.isNaN(Date.parse(value)))
    throw new UsageError(
      `--${flag}: expected an ISO-8601 time or an age (30m, 2h, 7d), got "${value}"`,
    );
  return value;
}
