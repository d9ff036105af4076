import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { connectionStatus, verifierOf } from "./integrations.ts";
import { jiraEventType, verifyJira } from "./jira.ts";
import type { InboundRequest } from "./verdict.ts";

/**
 * Jira Cloud's admin webhooks with a secret: `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the
 * raw body>`, as Atlassian documents it; AutoKitteh's event type and data.
 */
const SECRET = "jira-webhook-s3cret";
const created = {
  timestamp: 1_700_000_000_000,
  webhookEvent: "jira:issue_created",
  issue_event_type_name: "issue_created",
  issue: { key: "OPS-7", fields: { summary: "Disk full", project: { key: "OPS" } } },
  user: { displayName: "Ada" },
};
const sign = (body: string, secret = SECRET) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
const req = (body: string, headers: Record<string, string> = {}): InboundRequest => ({
  method: "POST",
  headers: new Headers({ "content-type": "application/json", ...headers }),
  body: Buffer.from(body),
  now: Date.now(),
});
const vars = (values: Record<string, string>) => (name: string) => values[name];
const withSecret = vars({ webhook_secret: SECRET });

describe("jira: signatures", () => {
  it("takes a delivery signed with the webhook's secret: AutoKitteh's event type, the payload as data", () => {
    const body = JSON.stringify(created);
    const verdict = verifyJira(
      req(body, { "x-hub-signature": sign(body), "x-atlassian-webhook-identifier": "wh-1" }),
      withSecret,
    );
    expect(verdict).toEqual({
      kind: "events",
      delivery: "wh-1",
      events: [{ event_type: "issue_created", data: created }],
    });
    // The registry hands jira connections this verifier.
    expect(verifierOf("jira")).toBe(verifyJira);
  });

  it("refuses a wrong, missing or tampered signature, and any delivery without a secret set", () => {
    const body = JSON.stringify(created);
    const cases: [InboundRequest, ReturnType<typeof vars>, number, string][] = [
      [req(body, { "x-hub-signature": sign(body, "other") }), withSecret, 401, "does not match"],
      [req(`${body} `, { "x-hub-signature": sign(body) }), withSecret, 401, "does not match"],
      [
        req(body, { "x-hub-signature-256": sign(body) }),
        withSecret,
        401,
        "X-Hub-Signature is missing",
      ],
      [
        req(body, { "x-hub-signature": sign(body).replace("sha256", "sha1") }),
        withSecret,
        401,
        "match",
      ],
      [req(body, { "x-hub-signature": sign(body) }), vars({}), 403, "no webhook_secret"],
      [
        req(body, { "x-hub-signature": sign(body) }),
        vars({ webhook_secret: "" }),
        403,
        "no webhook",
      ],
    ];
    for (const [r, v, status, detail] of cases) {
      expect(verifyJira(r, v)).toMatchObject({
        kind: "refuse",
        status,
        detail: expect.stringContaining(detail),
      });
    }
  });

  it("refuses what Jira does not send once signed: other content types, no JSON object, no webhookEvent", () => {
    const signed = (body: string, type = "application/json") =>
      verifyJira(req(body, { "x-hub-signature": sign(body), "content-type": type }), withSecret);
    expect(signed("a=1", "application/x-www-form-urlencoded")).toMatchObject({ status: 400 });
    expect(signed("[1]")).toMatchObject({ status: 400, detail: "the body is not a JSON object" });
    expect(signed('{"issue": {}}')).toMatchObject({ status: 400, detail: /no webhookEvent/ });
  });

  it("answers issue_property_set and _deleted without an event, as AutoKitteh drops them", () => {
    const body = JSON.stringify({ webhookEvent: "issue_property_set" });
    expect(verifyJira(req(body, { "x-hub-signature": sign(body) }), withSecret)).toMatchObject({
      kind: "answer",
      status: 200,
    });
  });

  it("drops only the jira: prefix of webhookEvent", () => {
    expect(
      ["jira:issue_updated", "comment_created", "sprint_started", "jira:worklog_updated"].map(
        jiraEventType,
      ),
    ).toEqual(["issue_updated", "comment_created", "sprint_started", "worklog_updated"]);
  });

  it("is ready with the webhook's secret and the client's token and site", () => {
    expect(connectionStatus("jira", new Set(["Token"]))).toEqual({
      state: "needs",
      needs: ["webhook_secret or oauth_AccessToken", "BaseURL or base_url or AccessURL"],
    });
    // An OAuth connection: its token serves the events (a registered webhook) and the client.
    expect(connectionStatus("jira", new Set(["oauth_AccessToken", "AccessURL"])).state).toBe(
      "ready",
    );
    expect(connectionStatus("jira", new Set(["webhook_secret", "APIKeyOrPAT", "BaseURL"]))).toEqual(
      {
        state: "ready",
        needs: [],
      },
    );
  });
});
