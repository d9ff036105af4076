import { sameSecret } from "../secrets.ts";
import { type ConnectionVars, type InboundRequest, refuse, type Verdict } from "./verdict.ts";

/** The Google integrations whose changes reach handlers by push notifications (watch channels). */
export type GoogleWatchKind = "googlecalendar" | "googledrive";

/**
 * The vars that hold a connection's watch channel, AutoKitteh's names, and the channel token
 * the service checks deliveries with (its own, sealed). Calendar's expiry is in epoch ms,
 * Drive's in epoch seconds, as AutoKitteh saves them.
 */
export const WATCH_VARS = {
  googlecalendar: {
    id: "CalendarEventsWatchID",
    resource: "CalendarEventsWatchResID",
    expiration: "CalendarEventsWatchExp",
    cursor: "CalendarEventsSyncToken",
    token: "CalendarEventsWatchToken",
  },
  googledrive: {
    id: "DriveEventsWatchID",
    resource: "DriveEventsWatchResID",
    expiration: "DriveEventsWatchExp",
    cursor: "DriveChangesStartPageToken",
    token: "DriveEventsWatchToken",
  },
} as const;

export const isGoogleWatchKind = (integration: string): integration is GoogleWatchKind =>
  integration === "googlecalendar" || integration === "googledrive";

/** The calendar a Calendar connection is to watch: its `CalendarID` (AutoKitteh's), else primary. */
export const calendarOf = (vars: (name: string) => string | undefined) =>
  vars("CalendarID") || "primary";

/** Hookline's var (AutoKitteh keeps none): the calendar a Calendar channel was made on. */
export const WATCHED_CALENDAR = "CalendarEventsWatchCalendarID";

/**
 * Whether a Calendar connection's channel watches another calendar than its `CalendarID` now
 * names (default `primary`): the ID was changed after the channel was made. A channel made
 * before the service kept `WATCHED_CALENDAR` is taken as watching the one named. Drive: never.
 * @example watchMoved("googlecalendar", vars) // true once CalendarID changed from "primary"
 */
export function watchMoved(kind: GoogleWatchKind, vars: (name: string) => string | undefined) {
  if (kind !== "googlecalendar") return false;
  const named = calendarOf(vars);
  return (vars(WATCHED_CALENDAR) ?? named) !== named;
}

/**
 * A watch channel's expiry var as epoch ms (Calendar saves ms, Drive seconds), or null.
 * @example watchExpiry("googledrive", "1700000000") // 1700000000000
 */
export function watchExpiry(kind: GoogleWatchKind, text: string | undefined): number | null {
  if (!text || !/^\d+$/.test(text)) return null;
  return kind === "googledrive" ? Number(text) * 1000 : Number(text);
}

/**
 * Epoch ms as a kind's expiry var.
 * @example watchExpiryText("googledrive", 1700000000000) // "1700000000"
 */
export const watchExpiryText = (kind: GoogleWatchKind, ms: number) =>
  String(kind === "googledrive" ? Math.floor(ms / 1000) : Math.floor(ms));

/**
 * A push notification of the connection's watch channel (Calendar's `events.watch`, Drive's
 * `changes.watch`): `X-Goog-Channel-Token` must equal the channel's token the service made
 * (compared in constant time); none made yet: 403. A `sync` message (sent when the channel is
 * made) is answered 200 and stored nowhere; any other state (`exists`, `not_exists`, Drive's
 * `change`, …) is a `pull`: what changed is read from Google with the connection's token.
 * @example verifyGooglePush("googlecalendar")(req, vars).kind // "pull", "answer" or "refuse"
 */
export function verifyGooglePush(kind: GoogleWatchKind) {
  const names = WATCH_VARS[kind];
  return (req: InboundRequest, vars: ConnectionVars): Verdict => {
    const expected = vars(names.token);
    if (!expected) {
      return refuse(403, `this connection has no watch channel (${names.token}) yet: refused`);
    }
    const given = req.headers.get("x-goog-channel-token");
    if (!given) return refuse(401, "X-Goog-Channel-Token is missing");
    if (!sameSecret(given, expected)) {
      return refuse(401, "X-Goog-Channel-Token is not this connection's channel token");
    }
    const state = req.headers.get("x-goog-resource-state") ?? "";
    if (!state) return refuse(400, "X-Goog-Resource-State is missing");
    if (state === "sync") {
      return { kind: "answer", status: 200, body: '{"ok":true}', contentType: "application/json" };
    }
    return { kind: "pull", state };
  };
}
