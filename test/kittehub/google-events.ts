import { generateKeyPairSync } from "node:crypto";
import type { ConnectionView } from "../../src/wire/views.ts";
import { pushTo, signJwt } from "../support/google-pubsub.ts";
import { describe, type Sent } from "./fire.ts";
import type { Fire } from "./plan.ts";
import type { EventContext } from "./secrets.ts";
import type { StandIn } from "./stand-in.ts";

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

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const TOPICS = {
  SVC_GMAIL_PUBSUB_TOPIC: "projects/kittehub/topics/gmail",
  SVC_GOOGLE_FORMS_PUBSUB_TOPIC: "projects/kittehub/topics/forms",
};

/**
 * What the service needs to take Pub/Sub pushes signed by the harness: the stand-in serves the
 * JWKS of the harness's key (`SVC_GOOGLE_JWKS_URL`), and the watches' topics are set. Called
 * before the service starts; sets the process's environment, which the service reads.
 */
export async function pubsubSetup(api: StandIn): Promise<void> {
  const jwk = { ...publicKey.export({ format: "jwk" }), kid: "kittehub", alg: "RS256", use: "sig" };
  await api.routes({ "GET /oauth2/v3/certs": { keys: [jwk] } });
  Object.assign(process.env, TOPICS, { SVC_GOOGLE_JWKS_URL: `${api.url}/oauth2/v3/certs` });
}

/** The data and attributes of a Gmail or Forms push, from the stand-in's state and the plan. */
async function message(ctx: EventContext, f: Fire, gmail: boolean) {
  if (gmail) {
    const history = asList(
      f.payload ?? {
        id: "1",
        messagesAdded: [{ message: { id: "m1", threadId: "t1", labelIds: ["INBOX"] } }],
      },
    );
    const data = await ctx.api.command<{ emailAddress: string; historyId: number }>({
      op: "gmail",
      history,
    });
    return { data: data as unknown, attributes: {} as Record<string, string>, ok: true };
  }
  const kind = (f.kind || "RESPONSES").toUpperCase();
  const p = (f.payload ?? {}) as Record<string, unknown>;
  const form = kind === "SCHEMA" ? p : undefined;
  const responses = kind === "RESPONSES" ? asList(f.payload) : undefined;
  const formId = String(ctx.entry.vars?.[f.connection!]?.FormID ?? "kittehub-form");
  const { watchId } = await ctx.api.command<{ watchId: string | null }>({
    op: "forms",
    kind,
    form,
    responses,
  });
  const attributes = { eventType: kind, formId, watchId: watchId ?? "" };
  return { data: {} as unknown, attributes, ok: watchId !== null };
}

/**
 * A Gmail or Forms Pub/Sub push, as Pub/Sub posts it to the service's shared route: the
 * wrapped message with an OIDC token signed by the harness's key (its JWKS on the stand-in).
 * Gmail: `payload` the history records the service then reads (default one message added).
 * Forms: `kind` RESPONSES (payload: the responses, the latest last) or SCHEMA (the form).
 */
export async function pubsubPush(ctx: EventContext, f: Fire, conn: ConnectionView): Promise<Sent> {
  const what = describe(f);
  const gmail = conn.integration === "gmail";
  const deadline = Date.now() + 20_000;
  for (;;) {
    const c = (await ctx.svc.connections(conn.project)).find((x) => x.name === conn.name)!;
    if (c.status.state === "ready") break;
    if (Date.now() > deadline) {
      const detail = `harness: the connection never got its watch (${c.status.state}: ${c.status.needs.join(", ")})`;
      return { what, accepted: false, detail };
    }
    await new Promise((ok) => setTimeout(ok, 500));
  }
  const m = await message(ctx, f, gmail);
  if (!m.ok)
    return {
      what,
      accepted: false,
      detail: "harness: the service made no form watch of that kind",
    };
  const url = ctx.svc.url + conn.inbound_path;
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: "https://accounts.google.com",
    aud: url,
    email: "pubsub@kittehub.iam.gserviceaccount.com",
    email_verified: true,
    iat: now,
    exp: now + 3600,
  };
  const res = await pushTo(url, signJwt(claims, privateKey, "kittehub"), m.data, m.attributes);
  const text = (await res.text()).slice(0, 300);
  return { what, accepted: res.status < 300, detail: `${res.status} ${text}`.trim() };
}
