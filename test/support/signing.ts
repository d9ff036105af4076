import { createHmac } from "node:crypto";

/** Requests signed as GitHub, Slack, Jira and Standard Webhooks senders sign them, for the tests. */

/** `sha256=` + the hex HMAC-SHA256 of `body`: GitHub's and Jira's signature. */
const hubSignature = (secret: string, body: string) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** A GitHub delivery: `X-Hub-Signature-256` over the raw body. */
export function githubDelivery(
  secret: string,
  event: string,
  payload: unknown,
  opts: { delivery?: string; type?: string; body?: string } = {},
): RequestInit {
  const body = opts.body ?? JSON.stringify(payload);
  return {
    method: "POST",
    body,
    headers: {
      "content-type": opts.type ?? "application/json",
      "x-github-event": event,
      "x-github-delivery": opts.delivery ?? crypto.randomUUID(),
      "x-hub-signature-256": hubSignature(secret, body),
    },
  };
}

/** A Slack request: `v0=` HMAC of `v0:<timestamp>:<body>`; `at` is Unix seconds. */
export function slackRequest(
  secret: string,
  body: string,
  opts: { at?: number; type?: string } = {},
): RequestInit {
  const at = String(opts.at ?? Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", secret).update(`v0:${at}:${body}`).digest("hex")}`;
  return {
    method: "POST",
    body,
    headers: {
      "content-type": opts.type ?? "application/json",
      "x-slack-request-timestamp": at,
      "x-slack-signature": signature,
    },
  };
}

/** A Standard Webhooks request (`whsec_` secret), with `extra` headers (Authorization). */
export function standardWebhook(
  secret: string,
  body: string,
  opts: { id?: string; at?: number; extra?: Record<string, string> } = {},
): RequestInit {
  const id = opts.id ?? `msg_${crypto.randomUUID()}`;
  const at = String(opts.at ?? Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${at}.${body}`).digest("base64");
  return {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": at,
      "webhook-signature": `v1,${mac}`,
      ...opts.extra,
    },
  };
}

/** A Jira admin webhook's delivery with a secret: `X-Hub-Signature` over the raw body. */
export function jiraDelivery(
  secret: string,
  payload: unknown,
  opts: { identifier?: string; body?: string } = {},
): RequestInit {
  const body = opts.body ?? JSON.stringify(payload);
  return {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "x-atlassian-webhook-identifier": opts.identifier ?? crypto.randomUUID(),
      "x-hub-signature": hubSignature(secret, body),
    },
  };
}
