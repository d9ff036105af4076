import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { DeployResult } from "../../src/deploy/index.ts";
import { type EmulatorHandle, folderFiles } from "./emulator.ts";

/** One call the stand-in took: method, path, body (JSON), and whether its Bearer token was right. */
export interface AtlassianCall {
  method: string;
  path: string;
  body: unknown;
  authorized: boolean;
}

/** A dynamic webhook the stand-in keeps, as Atlassian does. */
export interface StandInWebhook {
  id: number;
  url: string;
  events: string[];
  jqlFilter: string;
  /** Epoch ms. */
  expires: number;
}

export interface StandInAtlassian {
  url: string;
  calls: AtlassianCall[];
  webhooks: StandInWebhook[];
  /** The access token it takes (changeable: a test may revoke it). */
  token: string;
  /** Instead of `token`: whether it takes a token (an OAuth server's, say: `oidc.valid`). */
  accepts?: (token: string) => Promise<boolean>;
  /** How long its webhook calls take, ms (0): a slow Atlassian shows who waits for it. */
  slowMs: number;
  /** Its clock, epoch ms (a test's manual clock, else the wall's). */
  now: () => number;
  close(): Promise<void>;
}

export const CLOUD_ID = "11223344-a1b2-3b33-c444-def123456789";
export const SITE_URL = "https://example.atlassian.net";
const LIFE_MS = 30 * 24 * 3600_000;
const JIRA = `/ex/jira/${CLOUD_ID}/rest/api/3/webhook`;

/** Atlassian's date form for an expiry: `2019-06-01T12:42:30.000+0000`. */
const atlassianDate = (ms: number) => new Date(ms).toISOString().replace("Z", "+0000");

type Answer = [number, unknown];

function route(api: StandInAtlassian, method: string, path: string, body: unknown): Answer {
  const b = (body ?? {}) as Record<string, unknown>;
  const key = `${method} ${path}`;
  if (key === "GET /oauth/token/accessible-resources") {
    const scopes = ["read:jira-work", "manage:jira-webhook", "offline_access"];
    return [200, [{ id: CLOUD_ID, url: SITE_URL, name: "example", scopes, avatarUrl: "" }]];
  }
  if (key === `GET ${JIRA}`) {
    const values = api.webhooks.map((w) => ({ ...w, expirationDate: w.expires }));
    return [200, { startAt: 0, maxResults: 100, total: values.length, isLast: true, values }];
  }
  if (key === `POST ${JIRA}`) {
    const [spec] = b.webhooks as { events: string[]; jqlFilter: string }[];
    const id = 1000 + api.webhooks.length;
    api.webhooks.push({ id, url: String(b.url), ...spec!, expires: api.now() + LIFE_MS });
    return [200, { webhookRegistrationResult: [{ createdWebhookId: id }] }];
  }
  if (key === `PUT ${JIRA}/refresh`) {
    const ids = b.webhookIds as number[];
    const mine = api.webhooks.filter((w) => ids.includes(w.id));
    if (!mine.length) return [404, { errorMessages: ["Webhook not found"] }];
    for (const w of mine) w.expires = api.now() + LIFE_MS;
    return [200, { expirationDate: atlassianDate(mine[0]!.expires) }];
  }
  if (key === `DELETE ${JIRA}`) {
    const ids = b.webhookIds as number[];
    const kept = api.webhooks.filter((w) => !ids.includes(w.id));
    if (kept.length === api.webhooks.length) return [404, { errorMessages: ["Webhook not found"] }];
    api.webhooks.splice(0, api.webhooks.length, ...kept);
    return [202, {}];
  }
  return [404, { errorMessages: [`no ${key}`] }];
}

/**
 * Atlassian's REST API for dynamic webhooks on loopback, at a random port: accessible
 * resources (one site), the webhook list, registration, refresh and deletion under
 * `/ex/jira/<cloud id>`; every call recorded, and refused 401 unless its Bearer token is `token`.
 * @example const atl = await standInAtlassian("access-1"); process.env.SVC_OAUTH_JIRA_API_URL = atl.url;
 */
export async function standInAtlassian(
  token: string,
  now: () => number = Date.now,
): Promise<StandInAtlassian> {
  const api = { calls: [], webhooks: [], token, now, slowMs: 0 } as unknown as StandInAtlassian;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body = text ? JSON.parse(text) : undefined;
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const method = req.method ?? "GET";
      const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      const authorized = api.accepts ? await api.accepts(bearer) : bearer === api.token;
      if (api.slowMs && path.includes("/webhook"))
        await new Promise((r) => setTimeout(r, api.slowMs));
      api.calls.push({ method, path, body, authorized });
      const [status, json] = authorized
        ? route(api, method, path, body)
        : [401, { code: 401, message: "Unauthorized" }];
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

/**
 * Deploys the jira project of `fixture` again without its jira connection (a manifest of its one
 * webhook trigger), as a user who removes the connection does.
 */
export async function redeployWithoutJira(emu: EmulatorHandle, fixture: string): Promise<void> {
  const files = folderFiles(fixture);
  delete files["autokitteh.yaml"];
  const manifest = [
    "version: v1",
    "project:",
    "  name: jira_events",
    "  triggers:",
    "    - {name: wait_comment, type: webhook, call: program.py:wait_comment}",
  ].join("\n");
  await emu.api<DeployResult>("/deploy", {
    method: "POST",
    body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
  });
}
