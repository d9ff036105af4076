import type { ConnectionView } from "../../src/wire/views.ts";
import { describe, type Sent } from "./fire.ts";
import type { Fire } from "./plan.ts";
import type { EventContext } from "./secrets.ts";

export type { EventContext };

interface Channel {
  id: string;
  token: string;
  resourceId: string;
  messages: number;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const asList = (payload: unknown) =>
  Array.isArray(payload) ? payload : payload === undefined || payload === null ? [] : [payload];

/**
 * A Google Calendar or Drive push notification, as Google posts it to the watch channel the
 * service made (on the stand-in, once the connection had its token): the channel's id and
 * token, `X-Goog-Resource-State` `kind` (default `exists` for Calendar, `change` for Drive). The
 * service then reads what changed: the stand-in gives `payload` (an Event or a Change, or a list).
 */
export async function googlePush(ctx: EventContext, f: Fire, conn: ConnectionView): Promise<Sent> {
  const what = describe(f);
  const kind = conn.integration === "googledrive" ? "drive" : "calendar";
  const deadline = Date.now() + 20_000;
  let channel: Channel | null = null;
  while (!channel) {
    ({ channel } = await ctx.api.command<{ channel: Channel | null }>({
      op: "google_push",
      kind,
      inbound: conn.inbound_path,
      changes: asList(f.payload),
    }));
    if (channel) break;
    if (Date.now() > deadline) {
      const detail = `harness: the service made no ${kind} watch channel (connection: ${conn.status.state} ${conn.status.needs.join(", ")})`;
      return { what, accepted: false, detail };
    }
    await sleep(500);
  }
  const res = await fetch(ctx.svc.url + conn.inbound_path, {
    method: "POST",
    headers: {
      "x-goog-channel-id": channel.id,
      "x-goog-channel-token": channel.token,
      "x-goog-channel-expiration": new Date(Date.now() + 3600_000).toUTCString(),
      "x-goog-resource-id": channel.resourceId,
      "x-goog-resource-state": f.kind || (kind === "drive" ? "change" : "exists"),
      "x-goog-resource-uri": `https://www.googleapis.com/${kind}/v3/watched`,
      "x-goog-message-number": String(channel.messages),
    },
  });
  const text = (await res.text()).slice(0, 300);
  return { what, accepted: res.status < 300, detail: `${res.status} ${text}`.trim() };
}

/** Gmail / Forms Pub/Sub pushes: not delivered yet. */
export async function pubsubPush(
  _ctx: EventContext,
  f: Fire,
  _conn: ConnectionView,
): Promise<Sent> {
  return { what: describe(f), accepted: false, detail: "harness: Pub/Sub push not delivered yet" };
}
