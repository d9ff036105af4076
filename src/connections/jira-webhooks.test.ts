import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CLOUD_ID, type StandInAtlassian, standInAtlassian } from "../../test/support/atlassian.ts";
import { atlassianTime, JIRA_WEBHOOK_EVENTS, WEBHOOK_LIFE_MS } from "./jira-atlassian.ts";
import { ensureJiraWebhook } from "./jira-webhooks.ts";

/**
 * `ensureJiraWebhook` against a stand-in Atlassian on loopback that checks the Bearer token:
 * what it registers, when it refreshes, what it keeps, what it saves.
 */
const TOKEN = "oauth-access-1";
const INBOUND = "https://hooks.example.com/inbound/abcdefghijklmnopqrstuvwxyz";
const DAY = 24 * 3600_000;
let atl: StandInAtlassian;
const vars = (values: Record<string, string>) => (name: string) => values[name] || undefined;
const ensure = (values: Record<string, string>, now = Date.now()) =>
  ensureJiraWebhook({ vars: vars(values), inboundUrl: INBOUND, now, apiUrl: atl.url });
const oauth = { oauth_AccessToken: TOKEN, auth_type: "oauth" };
const calls = () => atl.calls.map((c) => `${c.method} ${c.path.replace(CLOUD_ID, "<cloud>")}`);

beforeAll(async () => {
  atl = await standInAtlassian(TOKEN);
});
afterAll(() => atl.close());
beforeEach(() => {
  atl.calls.length = 0;
  atl.webhooks.length = 0;
  atl.token = TOKEN;
});

describe("ensureJiraWebhook", () => {
  it("does nothing for a connection without an OAuth token", async () => {
    const others: Record<string, string>[] = [
      {},
      { Token: "api-token" },
      { ...oauth, auth_type: "apiToken" },
    ];
    for (const v of others) {
      expect((await ensure(v)).action).toBe("skipped");
    }
    expect(atl.calls).toEqual([]);
  });

  it("registers AutoKitteh's webhook to the inbound URL, and returns the vars to save", async () => {
    const now = Date.now();
    const r = await ensure(oauth, now);
    expect(r.action).toBe("registered");
    expect(calls()).toEqual([
      "GET /oauth/token/accessible-resources",
      "GET /ex/jira/<cloud>/rest/api/3/webhook",
      "POST /ex/jira/<cloud>/rest/api/3/webhook",
    ]);
    expect(atl.calls.every((c) => c.authorized)).toBe(true);
    expect(atl.calls[2]!.body).toEqual({
      url: INBOUND,
      webhooks: [{ events: [...JIRA_WEBHOOK_EVENTS], jqlFilter: `project != "${INBOUND}"` }],
    });
    expect(r.set).toMatchObject({
      AccessID: CLOUD_ID,
      AccessURL: "https://example.atlassian.net",
      AccessScope: "[read:jira-work manage:jira-webhook offline_access]",
      WebhookID: "1000",
      WebhookKey: "example/1000",
    });
    const expires = Date.parse(r.set.WebhookExpiration!);
    expect(Math.abs(expires - (now + WEBHOOK_LIFE_MS))).toBeLessThan(1000);
  });

  it("keeps a webhook far from its expiry, and refreshes one within 14 days of it", async () => {
    const first = await ensure(oauth);
    const saved = { ...oauth, ...first.set };
    atl.calls.length = 0;
    expect((await ensure(saved)).action).toBe("kept");
    expect(atl.calls).toEqual([]);
    // Fifteen days on, fifteen left: kept; seventeen on, thirteen left: refreshed.
    expect((await ensure(saved, Date.now() + 15 * DAY)).action).toBe("kept");
    expect(atl.calls).toEqual([]);
    const later = Date.now() + 17 * DAY;
    const r = await ensure(saved, later);
    expect(r.action).toBe("refreshed");
    expect(calls()).toEqual(["PUT /ex/jira/<cloud>/rest/api/3/webhook/refresh"]);
    expect(atl.calls[0]!.body).toEqual({ webhookIds: [1000] });
    // The expiry Atlassian said, in its form with +0000, saved as RFC 3339.
    expect(r.set.WebhookExpiration).toBe(
      new Date(atl.webhooks[0]!.expires).toISOString().replace(/\.\d{3}Z$/, "Z"),
    );
    expect(r.set.WebhookID).toBe("1000");
  });

  it("registers anew when Atlassian no longer knows the webhook, and finds one by its JQL", async () => {
    const gone = await ensure({ ...oauth, AccessID: CLOUD_ID, WebhookID: "999" });
    expect(gone.action).toBe("registered");
    expect(calls()).toEqual([
      "PUT /ex/jira/<cloud>/rest/api/3/webhook/refresh",
      "POST /ex/jira/<cloud>/rest/api/3/webhook",
    ]);
    // The vars lost (a restore): the webhook is found by its JQL and refreshed, not doubled.
    atl.calls.length = 0;
    const found = await ensure({ ...oauth, AccessID: CLOUD_ID });
    expect(found).toMatchObject({ action: "refreshed", set: { WebhookID: "1000" } });
    expect(atl.webhooks).toHaveLength(1);
  });

  it("fails, saving nothing, on a refused token or an unreachable API", async () => {
    atl.token = "another";
    const refused = await ensure({ ...oauth, AccessID: CLOUD_ID });
    expect(refused).toMatchObject({ action: "failed", set: {} });
    expect(refused.detail).toMatch(/Atlassian answered 401/);
    expect(refused.detail).not.toContain(TOKEN);
    const down = await ensureJiraWebhook({
      vars: vars(oauth),
      inboundUrl: INBOUND,
      now: Date.now(),
      apiUrl: "http://127.0.0.1:1",
    });
    expect(down).toMatchObject({ action: "failed", detail: expect.stringMatching(/unreachable/) });
  });

  it("reads Atlassian's times in both of its forms", () => {
    expect(atlassianTime("2019-06-01T12:42:30.000+0000")).toBe(Date.UTC(2019, 5, 1, 12, 42, 30));
    expect(atlassianTime(1_559_392_950_000)).toBe(1_559_392_950_000);
    expect(atlassianTime("soon")).toBeNull();
  });
});
