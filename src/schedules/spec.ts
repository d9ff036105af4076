import { Cron } from "croner";

/** Descriptors AutoKitteh (robfig/cron) accepts, as five-field cron. */
const DESCRIPTORS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000 };

/** The shortest `@every` interval: a tighter loop would only load the machine. */
export const MIN_EVERY_MS = 1000;

/** When a schedule fires: the first slot strictly after a time. */
export interface Schedule {
  /** The text as the manifest gives it. */
  readonly text: string;
  readonly timezone: string;
  /** The first slot strictly after `after`, or null when there is none. */
  next(after: Date): Date | null;
  /** The latest slot at or before `at` and strictly after `since`, or null. */
  latest(since: Date, at: Date): Date | null;
}

/**
 * A Go-style duration of hours, minutes and seconds (`15m`, `1h30m`, `10s`) in ms, or null.
 * @example parseEvery("1h30m") // 5_400_000
 */
export function parseEvery(text: string): number | null {
  if (!/^(\d+[hms])+$/.test(text)) return null;
  let ms = 0;
  for (const m of text.matchAll(/(\d+)([hms])/g)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms;
}

/** Slots on multiples of `period` since the Unix epoch: every instance computes the same ones. */
function everySchedule(text: string, timezone: string, period: number): Schedule {
  const next = (after: Date) => new Date((Math.floor(after.getTime() / period) + 1) * period);
  return {
    text,
    timezone,
    next,
    latest(since, at) {
      const slot = Math.floor(at.getTime() / period) * period;
      return slot > since.getTime() ? new Date(slot) : null;
    },
  };
}

/** Windows to look back through for the latest missed slot, smallest first. */
const LOOKBACK_MS = [60_000, 3_600_000, 86_400_000, 32 * 86_400_000, 367 * 86_400_000];

function cronSchedule(text: string, timezone: string, pattern: string): Schedule {
  const cron = new Cron(pattern, { timezone, paused: true });
  const next = (after: Date) => cron.nextRun(after);
  return {
    text,
    timezone,
    next,
    latest(since, at) {
      // The smallest window back from `at` that holds a slot has few of them: walk it.
      for (const window of LOOKBACK_MS) {
        const from = new Date(Math.max(since.getTime(), at.getTime() - window));
        let slot = next(from);
        if (!slot || slot > at) {
          if (from.getTime() === since.getTime()) return null;
          continue;
        }
        for (let s = next(slot); s && s <= at; s = next(s)) slot = s;
        return slot;
      }
      return null;
    },
  };
}

/**
 * A schedule from a manifest's `schedule:` text: five-field cron, a descriptor (`@daily`,
 * `@hourly`, …) or `@every <duration>` (`15m`, `1h30m`, `10s`), in `timezone` (IANA name).
 * @throws Error saying what is wrong with the text or the timezone
 * @example parseSchedule("@every 15m", "UTC").next(new Date("2026-01-01T00:07:00Z"))
 *   // 2026-01-01T00:15:00.000Z
 */
export function parseSchedule(text: string, timezone = "UTC"): Schedule {
  checkTimezone(timezone);
  const trimmed = text.trim();
  if (trimmed.startsWith("@every")) {
    const duration = trimmed.slice("@every".length).trim();
    const ms = parseEvery(duration);
    if (ms === null) {
      throw new Error(`"${text}": @every takes a duration such as 15m, 1h30m or 10s`);
    }
    if (ms < MIN_EVERY_MS) throw new Error(`"${text}": @every needs at least 1s`);
    return everySchedule(text, timezone, ms);
  }
  if (trimmed.startsWith("@")) {
    const pattern = DESCRIPTORS[trimmed.toLowerCase()];
    if (!pattern) {
      throw new Error(
        `"${text}" is not a known descriptor (use ${Object.keys(DESCRIPTORS).join(", ")} or @every <duration>)`,
      );
    }
    return cronSchedule(text, timezone, pattern);
  }
  const fields = trimmed.split(/\s+/);
  if (fields.length !== 5) {
    throw new Error(
      `"${text}" is not a schedule: give five cron fields (minute hour day month weekday), ` +
        "a descriptor such as @daily, or @every <duration>",
    );
  }
  try {
    return cronSchedule(text, timezone, fields.join(" "));
  } catch (e) {
    throw new Error(`"${text}" is not a valid cron expression: ${(e as Error).message}`);
  }
}

/**
 * Throws unless `timezone` is an IANA zone name this Node knows (`UTC`, `Europe/Paris`).
 * @example checkTimezone("Mars/Olympus") // throws: unknown timezone "Mars/Olympus"
 */
export function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new Error(
      `unknown timezone "${timezone}" (use an IANA name such as UTC or Europe/Paris)`,
    );
  }
}
