import type { TriggerRecord } from "../model/records.ts";
import { parseSchedule } from "./spec.ts";

/**
 * When a schedule trigger fires next after `now` (ISO-8601), or null for other triggers and
 * for a schedule that stored data no longer parses.
 * @example nextFire({ ...trigger, type: "schedule", schedule: "@hourly", timezone: "UTC" },
 *   new Date("2026-01-01T10:20:00Z")) // "2026-01-01T11:00:00.000Z"
 */
export function nextFire(trigger: TriggerRecord, now: Date): string | null {
  if (trigger.type !== "schedule" || !trigger.schedule) return null;
  try {
    return (
      parseSchedule(trigger.schedule, trigger.timezone ?? "UTC")
        .next(now)
        ?.toISOString() ?? null
    );
  } catch {
    return null;
  }
}
