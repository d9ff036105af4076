import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import { signAtlassianJwt } from "../src/connections/jira-jwt.ts";
import type { DeployResult } from "../src/deploy/index.ts";
import type { SessionRecord } from "../src/model/records.ts";
import {
  CLOUD_ID,
  redeployWithoutJira,
  type StandInAtlassian,
  standInAtlassian,
} from "./support/atlassian.ts";
import { fakeIo } from "./support/cli.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/**
 * A Jira connection that holds OAuth vars (as an authorization leaves them), through the real
 * service and real Python: the service registers AutoKitteh's dynamic webhook with the token at
 * a stand-in Atlassian, to the connection's inbound URL; a delivery signed as Atlassian signs
 * one (an HS256 JWT under the OAuth app's client secret) starts the trigger's session and
 * reaches `subscribe`; a forged or expired JWT stores and starts nothing; a webhook near its
 * expiry is refreshed.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-jira");
const TOKEN = "oauth-e2e-access-token";
const CLIENT_SECRET = "jira-oauth-client-s3cret";
const DAY = 24 * 3600_000;
const issue = {
  webhookEvent: "jira:issue_created",
  issue: { key: "OPS-9" },
  matchedWebhookIds: [1000],
};

/** A delivery as Atlassian sends a dynamic webhook's: JSON, and a JWT in Authorization. */
function delivery(
  payload: unknown,
  claims: Record<string, unknown>,
  secret = CLIENT_SECRET,
): RequestInit {
  return {
    method: "POST",
    body: JSON.stringify(payload),
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${signAtlassianJwt(claims, secret)}`,
      "x-atlassian-webhook-identifier": crypto.randomUUID(),
    },
  };
}
const fresh = () => ({
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 180,
});

describe("connections: Jira events through OAuth", () => {
  let atl: StandInAtlassian;
  beforeAll(async () => {
    atl = await standInAtlassian(TOKEN);
    process.env.SVC_OAUTH_JIRA_API_URL = atl.url;
    process.env.JIRA_CLIENT_SECRET = CLIENT_SECRET;
  });
  afterAll(async () => {
    delete process.env.SVC_OAUTH_JIRA_API_URL;
    delete process.env.JIRA_CLIENT_SECRET;
    await atl.close();
  });
  const emu = useEmulator();
  let inbound = "";
  const cli = async (...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
    return { code: await runCli(argv, io), out, err };
  };
  const setVar = (...args: string[]) =>
    cli("var", "set", "--connection", "jira_events/jira", ...args);
  const vars = async () => {
    const { vars } = await emu.api<{ vars: { name: string; value: string }[] }>(
      "/envs/jira_events/vars",
    );
    return Object.fromEntries(vars.map((x) => [x.name.replace(/^jira__/, ""), x.value]));
  };
  const counts = async () => [
    (await emu.api<{ events: unknown[] }>("/events?project=jira_events&limit=1000")).events.length,
    (await emu.api<{ sessions: SessionRecord[] }>("/sessions?project=jira_events&limit=1000"))
      .sessions.length,
  ];
  const deploy = () => {
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
    return emu.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
  };

  it("registers AutoKitteh's webhook to the inbound URL once the OAuth vars are set, and keeps it across a redeploy", async () => {
    const result = await deploy();
    inbound = emu.url + result.connections[0]!.inbound_path;
    expect(atl.calls).toEqual([]); // no OAuth token yet: nothing to register
    expect((await setVar("--secret", "oauth_AccessToken", TOKEN)).code).toBe(0);
    expect((await setVar("auth_type", "oauth")).code).toBe(0);
    const saved = await until("the webhook's vars", async () => {
      const v = await vars();
      return v.WebhookID ? v : undefined;
    });
    expect(atl.webhooks).toHaveLength(1);
    expect(atl.webhooks[0]).toMatchObject({
      id: 1000,
      url: inbound,
      jqlFilter: `project != "${inbound}"`,
    });
    expect(atl.webhooks[0]!.events).toEqual(
      expect.arrayContaining(["jira:issue_created", "comment_created"]),
    );
    expect(atl.calls.every((c) => c.authorized)).toBe(true);
    expect(saved).toMatchObject({
      WebhookID: "1000",
      AccessID: CLOUD_ID,
      WebhookKey: "example/1000",
    });
    expect(Date.parse(saved.WebhookExpiration!)).toBeGreaterThan(Date.now() + 29 * DAY);
    expect(saved.oauth_AccessToken).toBe("********");
    const line = (await deploy()).lines.find((l) =>
      l.includes('connection "jira": inbound path is'),
    );
    expect(line).toMatch(/\(ready\)$/);
    await new Promise((r) => setTimeout(r, 300));
    expect(atl.calls.filter((c) => c.method === "POST")).toHaveLength(1);
    expect((await vars()).WebhookID).toBe("1000");
  });

  it("starts the trigger's session for a delivery signed with the client secret", async () => {
    const res = await fetch(inbound, delivery(issue, fresh()));
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    expect(session_ids).toHaveLength(1);
    expect((await emu.ended(session_ids[0]!)).state).toBe("completed");
    expect(await emu.prints(session_ids[0]!)).toEqual(["created OPS-9 as issue_created"]);
  });

  it("refuses a forged, expired or missing JWT: nothing stored, nothing started", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [RequestInit, number, string][] = [
      [delivery(issue, fresh(), "forged-secret"), 401, "signature does not match"],
      [delivery(issue, { iat: now - 600, exp: now - 300 }), 401, "expired"],
      [
        { ...delivery(issue, fresh()), headers: { "content-type": "application/json" } },
        403,
        "no webhook_secret",
      ],
      // Signed by the same OAuth app, but for another webhook (another connection's), or none.
      [
        delivery({ ...issue, matchedWebhookIds: [4242] }, fresh()),
        403,
        "the delivery names webhooks 4242 (matchedWebhookIds), not this connection's webhook 1000",
      ],
      [
        delivery({ webhookEvent: "jira:issue_created", issue: { key: "OPS-9" } }, fresh()),
        403,
        "names no webhook",
      ],
    ];
    for (const [init, status, detail] of cases) {
      const before = await counts();
      const res = await fetch(inbound, init);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain(detail);
      expect(await counts()).toEqual(before);
    }
  });

  it("hands comment_created to a subscriber of the connection", async () => {
    const hooks = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=jira_events",
    );
    const path = hooks.triggers.find((t) => t.name === "wait_comment")!.webhook_path;
    const res = await fetch(emu.url + path, { method: "POST" });
    const { session_id } = (await res.json()) as { session_id: string };
    await until("the subscription", async () =>
      (await emu.prints(session_id)).includes("subscribed"),
    );
    const comment = {
      webhookEvent: "comment_created",
      comment: { body: "via oauth" },
      matchedWebhookIds: [1000],
    };
    expect((await fetch(inbound, delivery(comment, fresh()))).status).toBe(202);
    expect((await emu.ended(session_id)).state).toBe("completed");
    expect(await emu.prints(session_id)).toEqual(["subscribed", "got comment_created via oauth"]);
  });

  it("refreshes the webhook when its expiry is near", async () => {
    const soon = new Date(Date.now() + 3 * DAY).toISOString().replace(/\.\d{3}Z$/, "Z");
    expect((await setVar("WebhookExpiration", soon)).code).toBe(0);
    const renewed = await until("the renewed expiry", async () => {
      const e = (await vars()).WebhookExpiration!;
      return Date.parse(e) > Date.now() + 29 * DAY && e;
    });
    const puts = atl.calls.filter((c) => c.method === "PUT");
    expect(puts).toEqual([
      {
        method: "PUT",
        path: `/ex/jira/${CLOUD_ID}/rest/api/3/webhook/refresh`,
        body: { webhookIds: [1000] },
        authorized: true,
      },
    ]);
    expect(renewed).not.toBe(soon);
    expect(atl.webhooks).toHaveLength(1);
  });

  it("deletes the webhook at Jira once the connection is removed by a redeploy", async () => {
    await redeployWithoutJira(emu, FIXTURE);
    await until("the webhook deleted", async () => atl.webhooks.length === 0);
    expect(atl.calls.filter((c) => c.method === "DELETE")).toEqual([
      {
        method: "DELETE",
        path: `/ex/jira/${CLOUD_ID}/rest/api/3/webhook`,
        body: { webhookIds: [1000] },
        authorized: true,
      },
    ]);
    const left = await until("the webhook's vars cleared", async () => {
      const v = await vars();
      return v.WebhookID === undefined && v;
    });
    expect(left.WebhookExpiration).toBeUndefined();
  });
});
