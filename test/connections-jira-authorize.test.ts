import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeployResult } from "../src/deploy/index.ts";
import {
  CLOUD_ID,
  redeployWithoutJira,
  SITE_URL,
  type StandInAtlassian,
  standInAtlassian,
} from "./support/atlassian.ts";
import { browserJar } from "./support/browser-jar.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";
import { until } from "./support/until.ts";

/**
 * "Authorize with Jira", end to end: a real OAuth server (oidc-provider) plays Atlassian's
 * authorization server, a stand-in Atlassian answers the accessible resources and the webhook
 * API (taking only the tokens the OAuth server issued), and a cookie jar is the browser. The
 * webhook is registered before the browser's "Connected" page is answered: the stand-in is
 * slow on purpose, so a registration left to the background would come after the page.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-jira");
const saved = { ...process.env };
const emu = useEmulator();
let oidc: OidcServer;
let atl: StandInAtlassian;

beforeAll(async () => {
  oidc = await oidcServer([
    {
      client_id: "jira-app",
      client_secret: "jira-s3cret",
      redirect_uris: [`${emu.url}/oauth/redirect/jira`],
      token_endpoint_auth_method: "client_secret_post",
    },
  ]);
  atl = await standInAtlassian("none");
  // Jira's scopes have no `openid`, so the server's userinfo would not take its tokens: the
  // stand-in takes what the token endpoint issued.
  atl.accepts = async (t) => oidc.grants.some((g) => g.access_token === t);
  atl.slowMs = 400;
  Object.assign(process.env, {
    JIRA_CLIENT_ID: "jira-app",
    JIRA_CLIENT_SECRET: "jira-s3cret",
    SVC_OAUTH_JIRA_AUTHORIZE_URL: `${oidc.url}/auth`,
    SVC_OAUTH_JIRA_TOKEN_URL: `${oidc.url}/token`,
    SVC_OAUTH_JIRA_RESOURCES_URL: `${atl.url}/oauth/token/accessible-resources`,
    SVC_OAUTH_JIRA_API_URL: atl.url,
  });
});

afterAll(async () => {
  process.env = saved;
  await atl?.close();
  await oidc?.close();
});

const vars = async () => {
  const { vars } = await emu.api<{ vars: { name: string; value: string }[] }>(
    "/envs/jira_events/vars",
  );
  return Object.fromEntries(vars.map((x) => [x.name.replace(/^jira__/, ""), x.value]));
};

describe("Authorize with Jira", () => {
  it("registers the connection's webhook before the Connected page is answered", async () => {
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
    const deployed = await emu.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    const inbound = emu.url + deployed.connections[0]!.inbound_path;
    const { connections } = await emu.api<{ connections: { id: string }[] }>(
      "/connections?project=jira_events",
    );
    expect(atl.calls).toEqual([]);

    const page = await browserJar().follow(`${emu.url}/oauth/start/jira?cid=${connections[0]!.id}`);
    // Taken at once, before anything else can run: what the page's answer waited for.
    const webhooks = [...atl.webhooks];
    const atPage = await vars();
    expect(page.status).toBe(200);
    expect(page.text).toContain("jira_events/jira is authorized with Jira");
    expect(webhooks).toHaveLength(1);
    expect(webhooks[0]).toMatchObject({ id: 1000, url: inbound });
    expect(atPage).toMatchObject({
      WebhookID: "1000",
      AccessID: CLOUD_ID,
      AccessURL: SITE_URL,
      auth_type: "oauth",
      oauth_AccessToken: "********",
    });
    // The token the OAuth server issued is the one Atlassian was called with, and no other.
    const issued = oidc.grants.filter((g) => g.grant_type === "authorization_code");
    expect(issued).toHaveLength(1);
    expect(atl.calls.every((c) => c.authorized)).toBe(true);
    const posts = atl.calls.filter((c) => c.method === "POST");
    expect(posts.map((c) => c.path)).toEqual([`/ex/jira/${CLOUD_ID}/rest/api/3/webhook`]);
    expect(posts[0]!.body).toMatchObject({ url: inbound });
  });

  it("deletes the webhook of the connection a redeploy removes, with a token refreshed for it", async () => {
    // An hour on, Atlassian takes only a refreshed token, not the one the authorization saved.
    const first = oidc.grants.map((g) => g.access_token);
    atl.accepts = async (t) => oidc.grants.some((g) => g.access_token === t && !first.includes(t));
    atl.slowMs = 0;
    await redeployWithoutJira(emu, FIXTURE);
    const deleted = await until("the DELETE at Atlassian", async () =>
      atl.calls.find((c) => c.method === "DELETE"),
    );
    expect(deleted).toEqual({
      method: "DELETE",
      path: `/ex/jira/${CLOUD_ID}/rest/api/3/webhook`,
      body: { webhookIds: [1000] },
      authorized: true,
    });
    expect(atl.webhooks).toEqual([]);
    expect(oidc.grants.slice(first.length).map((g) => g.grant_type)).toEqual(["refresh_token"]);
    await until("the webhook vars cleared", async () => (await vars()).WebhookID === undefined);
  });
});
