import type { InboundEvent } from "./verdict.ts";
import { isObject } from "./verdict.ts";

/**
 * Fields whose values are maps of the user's own keys (Go `map[string]…` fields in Google's
 * structs): their keys stay as they are, while every struct field name is snake_cased.
 */
const MAP_FIELDS = new Set([
  "private",
  "shared",
  "preferences",
  "parameters",
  "appProperties",
  "properties",
  "exportLinks",
  "answers", // a Forms response's answers, by question id
]);

/**
 * A Google field name as AutoKitteh's value wrapper names the Go struct's field
 * (`strcase.ToSnake`): `htmlLink` → `html_link`, `iCalUID` → `i_cal_uid`, `dateTime` →
 * `date_time`.
 * @example snakeName("recurringEventId") // "recurring_event_id"
 */
export function snakeName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/**
 * A Google resource (JSON as the REST API sends it) with its struct field names snake_cased
 * at every depth, the keys of user maps (`extendedProperties.private`, a file's
 * `appProperties`, …) kept.
 * @example snakeKeys({ htmlLink: "…", start: { dateTime: "…" } }) // { html_link, start: { date_time } }
 */
export function snakeKeys(value: unknown, keepKeys = false): unknown {
  if (Array.isArray(value)) return value.map((v) => snakeKeys(v));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[keepKeys ? k : snakeName(k)] = snakeKeys(v, !keepKeys && MAP_FIELDS.has(k));
  }
  return out;
}

/**
 * The scalar fields of Calendar's Event and Drive's Change that AutoKitteh's Go structs always
 * carry, with the zero value Go gives one Google left out: a handler may read
 * `event.data.description` of an event that has none, as in AutoKitteh.
 */
const EVENT_ZEROS: Record<string, unknown> = {
  id: "",
  status: "",
  summary: "",
  description: "",
  location: "",
  html_link: "",
  created: "",
  updated: "",
  sequence: 0,
  event_type: "",
  recurring_event_id: "",
  start: null,
  end: null,
  creator: null,
  organizer: null,
  attendees: [],
};
const CHANGE_ZEROS: Record<string, unknown> = {
  change_type: "",
  drive_id: "",
  file_id: "",
  kind: "",
  removed: false,
  time: "",
  file: null,
  drive: null,
};

/**
 * The events of changed Calendar events, as AutoKitteh names them: `event_deleted` for a
 * cancelled one, `event_created` for one at its first sequence, else `event_updated`; `data`
 * the Event resource, snake_cased (`data.summary`, `data.start.date_time`).
 * @example calendarEvents([{ id: "e1", status: "confirmed", sequence: 0 }])[0].event_type // "event_created"
 */
export function calendarEvents(items: Record<string, unknown>[]): InboundEvent[] {
  return items.map((item) => {
    const data = { ...EVENT_ZEROS, ...(snakeKeys(item) as Record<string, unknown>) };
    const type =
      item.status === "cancelled"
        ? "event_deleted"
        : Number(item.sequence ?? 0) === 0
          ? "event_created"
          : "event_updated";
    return { event_type: type, data };
  });
}

/**
 * The events of Drive changes, as AutoKitteh names them: `file_remove` for a removed file
 * (`removed: true`), else `file_change`; `data` the Change resource, snake_cased
 * (`data.file_id`, `data.file.name`).
 * @example driveEvents([{ fileId: "f1", removed: true }])[0].event_type // "file_remove"
 */
export function driveEvents(changes: Record<string, unknown>[]): InboundEvent[] {
  return changes.map((change) => ({
    event_type: change.removed === true ? "file_remove" : "file_change",
    data: { ...CHANGE_ZEROS, ...(snakeKeys(change) as Record<string, unknown>) },
  }));
}
