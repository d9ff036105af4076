import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One call the stand-in took: method, path with query, JSON body, and whether the token was right. */
export interface GoogleCall {
  method: string;
  path: string;
  body: unknown;
  authorized: boolean;
}

/** A channel a watch call made, as the stand-in keeps it (Google's Channel resource). */
export interface StandInChannel {
  kind: "calendar" | "drive";
  /** The calendar a Calendar channel watches (its path's ID); Drive: "". */
  calendar: string;
  id: string;
  token: string;
  address: string;
  resourceId: string;
  expiration: number;
  /** When the watch call made it, epoch ms. */
  created: number;
  stopped: boolean;
  messages: number;
}

export interface StandInGoogle {
  url: string;
  calls: GoogleCall[];
  channels: StandInChannel[];
  /** Calendar events the next `events.list` with a sync token gives (then forgotten). */
  calendarChanges: Record<string, unknown>[];
  /** Drive changes the next `changes.list` gives (then forgotten). */
  driveChanges: Record<string, unknown>[];
  /** How long the next channels live, ms, one value per watch call (then `lifeMs`). */
  lives: number[];
  /** Which bearer tokens are taken (default: the one given at the start). */
  accepts: (token: string) => boolean;
  /** How long each answer waits, ms (an authorization must wait for the watch). */
  slowMs: number;
  /**
   * Posts a notification as Google does to the newest live channel of a kind: its id, its
   * token (unless `token` is given), the resource state and message number, to its address
   * (or `address`: one instance of a fleet behind a router). Returns the answer.
   */
  notify(
    kind: "calendar" | "drive",
    state: string,
    token?: string,
    address?: string,
  ): Promise<Response>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : null;
}

/**
 * A stand-in of the Calendar v3 and Drive v3 APIs on loopback, for the calls the service makes
 * for watch channels: events.list (a full sync with `timeMin`, then by `syncToken`),
 * events.watch, changes.getStartPageToken, changes.watch, changes.list, channels.stop. Every
 * call must carry `Bearer <token>`. A watch answers as Google does (id, resourceId, expiration
 * in epoch ms as a string) and then posts the channel's `sync` message to its address.
 */
export async function standInGoogle(token: string, lifeMs = 3600_000): Promise<StandInGoogle> {
  // Each calendar's sync tokens: `sync-N` for primary, `<calendar>-sync-N` for another.
  const syncN = new Map<string, number>();
  const syncToken = (cal: string) =>
    `${cal === "primary" ? "" : `${cal}-`}sync-${syncN.get(cal) ?? 1}`;
  let pageN = 1;
  const g: Omit<StandInGoogle, "url" | "notify" | "close"> = {
    accepts: (t) => t === token,
    slowMs: 0,
    calls: [],
    channels: [],
    calendarChanges: [],
    driveChanges: [],
    lives: [],
  };
  const json = (status: number, body: unknown) => ({ status, body });
  const watch = (kind: "calendar" | "drive", body: Record<string, string>, calendar = "") => {
    const life = g.lives.shift() ?? lifeMs;
    const resourceId = `res-${kind}-${g.channels.length + 1}`;
    const channel = {
      kind,
      calendar,
      id: body.id!,
      token: body.token!,
      address: body.address!,
      resourceId,
      expiration: Date.now() + life,
      created: Date.now(),
      stopped: false,
      messages: 0,
    };
    g.channels.push(channel);
    setTimeout(() => void post(channel, "sync").catch(() => {}), 20);
    const answer = { kind: "api#channel", id: channel.id, resourceId, resourceUri: `…/${kind}` };
    return json(200, { ...answer, expiration: String(channel.expiration) });
  };
  const route = (method: string, url: URL, body: unknown) => {
    const p = url.pathname;
    const q = url.searchParams;
    const [, calendar, watching] =
      /^\/calendar\/v3\/calendars\/([^/]+)\/events(\/watch)?$/.exec(p) ?? [];
    const cal = calendar === undefined ? "" : decodeURIComponent(calendar);
    if (method === "GET" && calendar && !watching) {
      if (q.get("syncToken") === null)
        return json(200, { items: [], nextSyncToken: syncToken(cal) });
      if (q.get("syncToken") !== syncToken(cal)) return json(410, { error: { message: "Gone" } });
      const items = g.calendarChanges.splice(0);
      syncN.set(cal, (syncN.get(cal) ?? 1) + 1);
      return json(200, { items, nextSyncToken: syncToken(cal) });
    }
    if (method === "POST" && calendar && watching) {
      return watch("calendar", body as Record<string, string>, cal);
    }
    if (method === "GET" && p === "/drive/v3/changes/startPageToken") {
      return json(200, { startPageToken: "page-1" });
    }
    if (method === "POST" && p === "/drive/v3/changes/watch") {
      return watch("drive", body as Record<string, string>);
    }
    if (method === "GET" && p === "/drive/v3/changes") {
      if (q.get("pageToken") !== `page-${pageN}`) return json(400, { error: { message: "bad" } });
      pageN += 1;
      return json(200, { changes: g.driveChanges.splice(0), newStartPageToken: `page-${pageN}` });
    }
    if (method === "POST" && /^\/(calendar|drive)\/v3\/channels\/stop$/.test(p)) {
      const { id, resourceId } = body as { id: string; resourceId: string };
      const ch = g.channels.find((c) => c.id === id && c.resourceId === resourceId);
      if (!ch) return json(404, { error: { message: "Channel not found" } });
      ch.stopped = true;
      return json(204, null);
    }
    return json(404, { error: { message: `no route ${method} ${p}` } });
  };
  const server = createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const url = new URL(req.url!, "http://stand-in");
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const authorized = bearer !== undefined && stand.accepts(bearer);
      if (stand.slowMs) await new Promise((r) => setTimeout(r, stand.slowMs));
      g.calls.push({ method: req.method!, path: url.pathname + url.search, body, authorized });
      const out = authorized
        ? route(req.method!, url, body)
        : json(401, { error: { message: "Invalid Credentials" } });
      res.writeHead(out.status, { "content-type": "application/json" });
      res.end(out.status === 204 ? undefined : JSON.stringify(out.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = (ch: StandInChannel, state: string, given?: string, address?: string) => {
    ch.messages += 1;
    return fetch(address ?? ch.address, {
      method: "POST",
      headers: {
        "x-goog-channel-id": ch.id,
        "x-goog-channel-token": given ?? ch.token,
        "x-goog-channel-expiration": new Date(ch.expiration).toUTCString(),
        "x-goog-resource-id": ch.resourceId,
        "x-goog-resource-state": state,
        "x-goog-resource-uri": `https://www.googleapis.com/${ch.kind}/v3/watched`,
        "x-goog-message-number": String(ch.messages),
      },
    });
  };
  const stand: StandInGoogle = {
    ...g,
    url,
    notify(kind, state, given, address) {
      const ch = g.channels.filter((c) => c.kind === kind && !c.stopped).at(-1);
      if (!ch) throw new Error(`no live ${kind} channel`);
      return post(ch, state, given, address);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return stand;
}
