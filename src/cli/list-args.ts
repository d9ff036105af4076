/** `session list`'s time arguments and its notice of rows left out. */
import { UsageError } from "./io.ts";

/** What `GET /sessions` says of the rows it left out. */
export interface ListAnswer {
  more?: boolean;
  /** Older services: how many matched. */
  total?: number;
  /** The `before` of the next page. */
  next?: string;
}

/**
 * The stderr line `session list` adds when the service left rows out (`more`): how to see the
 * next page (`--before`, from the answer's `next`), or, from an older service, its total.
 * @example listNotice(100, { more: true, next: "ses_01" }) // "showing the newest 100; older ones with --before ses_01"
 */
export function listNotice(shown: number, answer: ListAnswer): string | null {
  if (!answer.more) return null;
  const n = (x: number) => x.toLocaleString("en-US");
  if (answer.next) return `showing the newest ${n(shown)}; older ones with --before ${answer.next}`;
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
