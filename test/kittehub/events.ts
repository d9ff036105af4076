import { createHmac } from "node:crypto";
import { githubDelivery, jiraDelivery, slackRequest } from "../support/signing.ts";
import { describe, type Sent } from "./fire.ts";
import { type EventContext, googlePush, pubsubPush } from "./google-events.ts";
import type { Fire } from "./plan.ts";
import { secretOf } from "./secrets.ts";

export type { EventContext };

/** A delivery's request to the connection's inbound URL, or why there is none. */
type Deliver = (ctx: EventContext, f: Fire, inbound: string) => Promise<RequestInit | string>;

const jsonPayload = (f: Fire) =>
  typeof f.payload === "string" ? f.payload : JSON.stringify(f.payload ?? {});

/**
 * Slack: an Events API envelope as given (`type: event_callback` or `url_verification`), an
 * inner event wrapped in one, or (`kind: slash_command` / `interaction`) the form Slack posts.
 */
function slackBody(f: Fire): { body: string; type: string } {
  const p = (f.payload ?? {}) as Record<string, unknown>;
  const form = "application/x-www-form-urlencoded";
  if (typeof f.payload === "string") return { body: f.payload, type: form };
  if (f.kind === "slash_command") {
    return { body: new URLSearchParams(p as Record<string, string>).toString(), type: form };
  }
  if (f.kind === "interaction") {
    return { body: new URLSearchParams({ payload: JSON.stringify(p) }).toString(), type: form };
  }
  if (p.type === "event_callback" || p.type === "url_verification") {
    return { body: JSON.stringify(p), type: "application/json" };
  }
  const envelope = {
    type: "event_callback",
    team_id: "T0KITTEH",
    api_app_id: "A0KITTEH",
    event_id: `Ev${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ user_id: "U0KITTEHBOT", is_bot: true }],
    event: p,
  };
  return { body: JSON.stringify(envelope), type: "application/json" };
}

const slack: Deliver = async (ctx, f) => {
  const { body, type } = slackBody(f);
  return slackRequest(secretOf(ctx.entry, f.connection!, "slack"), body, { type });
};

const github: Deliver = async (ctx, f) => {
  if (!f.kind) return "a github event names its X-GitHub-Event in `kind`";
  return githubDelivery(secretOf(ctx.entry, f.connection!, "github"), f.kind, f.payload ?? {}, {
    body: jsonPayload(f),
  });
};

const jira: Deliver = async (ctx, f) =>
  jiraDelivery(secretOf(ctx.entry, f.connection!, "jira"), f.payload ?? {}, {
    body: jsonPayload(f),
  });

/** Confluence: to `<inbound>/<category>` (`kind`, default `created`), signed as a webhook made
 * by hand (`webhook_secret`). */
const confluence: Deliver = async (ctx, f) => {
  const body = jsonPayload(f);
  const mac = createHmac("sha256", secretOf(ctx.entry, f.connection!, "confluence"));
  return {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "x-atlassian-webhook-identifier": crypto.randomUUID(),
      "x-hub-signature": `sha256=${mac.update(body).digest("hex")}`,
    },
  };
};

/** Telegram: the secret token the service gave the stand-in Bot API's `setWebhook`. */
const telegram: Deliver = async (ctx, f, inbound) => {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const sets = await ctx.api.requests("POST", "/bot{token}/setWebhook");
    const mine = sets.filter((r) => String(r.data?.url ?? "").endsWith(inbound)).at(-1);
    const token = mine?.data?.secret_token;
    if (typeof token === "string") {
      return {
        method: "POST",
        body: jsonPayload(f),
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": token },
      };
    }
    if (Date.now() > deadline)
      return "the service called no setWebhook for this connection (its log says why)";
    await new Promise((ok) => setTimeout(ok, 500));
  }
};

/** HTTP: with the connection's `auth` as the Authorization header. */
const http: Deliver = async (ctx, f) => ({
  method: (f.method ?? "POST").toUpperCase(),
  body: f.payload === undefined ? undefined : jsonPayload(f),
  headers: {
    "content-type": "application/json",
    authorization: secretOf(ctx.entry, f.connection!, "http"),
    ...(f.headers ?? {}),
  },
});

/** The connection event kinds delivered to the connection's inbound URL, by `event:` name. */
const INBOUND: Record<string, Deliver> = { slack, github, jira, confluence, telegram, http };

/**
 * Delivers a connection event as its provider does: signed to the connection's inbound URL, a
 * Google push or Pub/Sub push, or a Discord gateway dispatch.
 */
export async function sendEvent(ctx: EventContext, project: string, f: Fire): Promise<Sent> {
  const what = describe(f);
  const conn = (await ctx.svc.connections(project)).find((c) => c.name === f.connection);
  if (!conn) return { what, accepted: false, detail: `no connection ${f.connection} was deployed` };
  if (f.event === "googlecalendar" || f.event === "googledrive") return googlePush(ctx, f, conn);
  if (f.event === "gmail" || f.event === "googleforms") return pubsubPush(ctx, f, conn);
  if (f.event === "discord" && ctx.discord) return ctx.discord(ctx, f, conn);
  const deliver = INBOUND[f.event ?? ""];
  if (!deliver) {
    const known = [
      ...Object.keys(INBOUND),
      "googlecalendar",
      "googledrive",
      "gmail",
      "googleforms",
    ];
    return {
      what,
      accepted: false,
      detail: `harness: no ${f.event} events (known: ${known.join(", ")})`,
    };
  }
  const init = await deliver(ctx, f, conn.inbound_path);
  if (typeof init === "string") return { what, accepted: false, detail: `harness: ${init}` };
  const suffix = f.event === "confluence" ? `/${f.kind || "created"}` : "";
  const res = await fetch(ctx.svc.url + conn.inbound_path + suffix, init);
  const text = (await res.text()).slice(0, 300);
  return { what, accepted: res.status < 300, detail: `${res.status} ${text}`.trim() };
}
