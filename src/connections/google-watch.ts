import { randomBytes, randomUUID } from "node:crypto";
import { type GoogleCaller, googleCall, googleProblem, readPages } from "./google-api.ts";
import { calendarEvents, driveEvents } from "./google-events.ts";
import {
  calendarOf,
  type GoogleWatchKind,
  WATCH_VARS,
  WATCHED_CALENDAR,
  watchExpiry,
  watchExpiryText,
  watchMoved,
} from "./google-push.ts";
import type { ConnectionVars, InboundEvent } from "./verdict.ts";

/** AutoKitteh renews a channel within 3 days of its expiry; a shorter-lived one at half its life. */
export const WATCH_RENEW_BEFORE_MS = 3 * 24 * 3600_000;
/** The life the service asks of a Drive channel (Google's longest for changes: a week). */
const DRIVE_LIFE_MS = 7 * 24 * 3600_000;

/** What a watch is made, renewed, stopped or read with. */
export interface GoogleWatchInput {
  kind: GoogleWatchKind;
  /** The connection's vars now (short names, secrets opened). */
  vars: ConnectionVars;
  caller: GoogleCaller;
  /** Epoch ms. */
  now: number;
}

/** What `ensureGoogleWatch` did; `set` holds the vars to save (the channel token sealed). */
export interface GoogleWatchResult {
  action: "kept" | "created" | "renewed" | "failed";
  detail: string;
  set: Record<string, string>;
}

const calendarPath = (vars: ConnectionVars) =>
  `/calendar/v3/calendars/${encodeURIComponent(calendarOf(vars))}`;
const CAL_QUERY = "showHiddenInvitations=true&singleEvents=true";
const DRIVE_QUERY = "includeItemsFromAllDrives=true&supportsAllDrives=true";

/**
 * When a channel is renewed: 3 days before its expiry, or halfway through its life when it
 * lives less than 6 days (`savedAt`: when it was made).
 * @example renewDue(exp, exp - 7 * DAY) // exp - 3 days
 */
export function renewDue(expiresAt: number, savedAt: number): number {
  return expiresAt - Math.min(WATCH_RENEW_BEFORE_MS, Math.max(0, expiresAt - savedAt) / 2);
}

/** The token the next read starts from, read now (a full sync's end; no events). */
async function startCursor(input: GoogleWatchInput): Promise<string> {
  const { caller, kind, vars, now } = input;
  if (kind === "googledrive") {
    const path = `/drive/v3/changes/startPageToken?supportsAllDrives=true`;
    const answer = await googleCall(caller, "GET", path);
    const problem = googleProblem(answer);
    if (problem) throw new Error(`start page token: ${problem}`);
    return String(answer.json.startPageToken ?? "");
  }
  const since = encodeURIComponent(new Date(now).toISOString());
  const base = `${calendarPath(vars)}/events?${CAL_QUERY}&timeMin=${since}`;
  const list = await readPages(
    caller,
    (p) => (p ? `${base}&pageToken=${encodeURIComponent(p)}` : base),
    "items",
    "nextSyncToken",
  );
  return list.next;
}

/** Makes a channel to `address`: Calendar's `events.watch`, Drive's `changes.watch`. */
async function watch(input: GoogleWatchInput, cursor: string, address: string, token: string) {
  const { caller, kind, vars, now } = input;
  const channel = { id: randomUUID(), type: "web_hook", address, token };
  const path =
    kind === "googledrive"
      ? `/drive/v3/changes/watch?pageToken=${encodeURIComponent(cursor)}&${DRIVE_QUERY}`
      : `${calendarPath(vars)}/events/watch`;
  const body = kind === "googledrive" ? { ...channel, expiration: now + DRIVE_LIFE_MS } : channel;
  const answer = await googleCall(caller, "POST", path, body);
  const problem = googleProblem(answer);
  if (problem) throw new Error(`watch: ${problem}`);
  const expiration = Number(answer.json.expiration ?? 0) || now + DRIVE_LIFE_MS;
  return { id: channel.id, resource: String(answer.json.resourceId ?? ""), expiration };
}

/**
 * Stops a channel (`channels.stop` with its id and resource id): null once stopped (or
 * unknown to Google), else the problem in words. Never throws.
 * @example await stopGoogleWatch(input) // null, or "Google answered 401 …"
 */
export async function stopGoogleWatch(input: GoogleWatchInput): Promise<string | null> {
  const names = WATCH_VARS[input.kind];
  const id = input.vars(names.id);
  if (!id) return null;
  const api = input.kind === "googledrive" ? "/drive/v3" : "/calendar/v3";
  const body = { id, resourceId: input.vars(names.resource) ?? "" };
  try {
    const answer = await googleCall(input.caller, "POST", `${api}/channels/stop`, body);
    return answer.status === 404 ? null : googleProblem(answer);
  } catch (e) {
    return `Google unreachable: ${(e as Error).message}`;
  }
}

/**
 * Makes sure the connection has a live watch channel delivering to `address` (its inbound
 * URL): one whose renewal is not due is kept; else a new channel is made (the first time,
 * after the sync that gives the cursor its start: Calendar's `nextSyncToken`, Drive's start
 * page token) and the one it replaces stopped. The channel token is made once (32 random
 * bytes) and kept across renewals. Never throws; saves nothing itself.
 * @example await ensureGoogleWatch(input, "https://hooks.example.com/inbound/…", savedAt)
 */
export async function ensureGoogleWatch(
  input: GoogleWatchInput,
  address: string,
  savedAt: number,
): Promise<GoogleWatchResult> {
  const names = WATCH_VARS[input.kind];
  const { vars, now } = input;
  const old = vars(names.id);
  const expires = watchExpiry(input.kind, vars(names.expiration));
  // A changed CalendarID: a channel on the calendar it names, from that calendar's own sync.
  const moved = watchMoved(input.kind, vars);
  if (old && !moved && expires !== null && now < renewDue(expires, savedAt)) {
    return { action: "kept", detail: `channel ${old} lives until ${expires}`, set: {} };
  }
  try {
    // The cursor and token a channel had stay as they are (a read may move the cursor meanwhile).
    const cursor = moved ? undefined : vars(names.cursor);
    const token = vars(names.token);
    const fresh = {
      ...(!cursor && { [names.cursor]: await startCursor(input) }),
      ...(!token && { [names.token]: randomBytes(32).toString("base64url") }),
    };
    const made = await watch(
      input,
      cursor ?? fresh[names.cursor]!,
      address,
      token ?? fresh[names.token]!,
    );
    const stopped = old ? await stopGoogleWatch(input) : null;
    const set = {
      ...fresh,
      [names.id]: made.id,
      [names.resource]: made.resource,
      [names.expiration]: watchExpiryText(input.kind, made.expiration),
      ...(input.kind === "googlecalendar" && { [WATCHED_CALENDAR]: calendarOf(vars) }),
    };
    const note = stopped ? ` (the old channel ${old} not stopped: ${stopped})` : "";
    const action = old ? "renewed" : "created";
    const on = moved ? ` on calendar ${calendarOf(vars)}` : "";
    return { action, detail: `watch channel ${made.id} ${action}${on}${note}`, set };
  } catch (e) {
    return { action: "failed", detail: (e as Error).message, set: {} };
  }
}

/**
 * What changed since the connection's cursor (Calendar: `events.list` with the sync token;
 * Drive: `changes.list` from the page token), as events, and the cursor to save. A cursor
 * Google no longer takes (410) starts over with a full sync: no events, a new cursor. Throws
 * a problem in words.
 * @example const { events, cursor } = await pullGoogleChanges(input);
 */
export async function pullGoogleChanges(
  input: GoogleWatchInput,
): Promise<{ events: InboundEvent[]; cursor: string }> {
  const { kind, vars, caller } = input;
  const from = vars(WATCH_VARS[kind].cursor);
  if (!from) return { events: [], cursor: await startCursor(input) };
  const drive = kind === "googledrive";
  const path = (page: string | undefined) =>
    drive
      ? `/drive/v3/changes?pageToken=${encodeURIComponent(page ?? from)}&${DRIVE_QUERY}&includeCorpusRemovals=true`
      : `${calendarPath(vars)}/events?${CAL_QUERY}&syncToken=${encodeURIComponent(from)}${
          page ? `&pageToken=${encodeURIComponent(page)}` : ""
        }`;
  const list = await readPages(
    caller,
    path,
    drive ? "changes" : "items",
    drive ? "newStartPageToken" : "nextSyncToken",
  );
  if (list.gone) return { events: [], cursor: await startCursor(input) };
  const events = drive ? driveEvents(list.items) : calendarEvents(list.items);
  return { events, cursor: list.next || from };
}
