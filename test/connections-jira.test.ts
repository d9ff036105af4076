import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import type { DeployResult } from "../src/deploy/index.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { jiraDelivery } from "./support/signing.ts";
import { until } from "./support/until.ts";

/**
 * A Jira connection through the real service and real Python: a delivery signed with the
 * webhook's secret starts its trigger's session and reaches `subscribe("jira")`; forged,
 * unsigned, malformed and repeated ones store nothing and start nothing.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-jira");
const SECRET = "jira-webhook-s3cret";
const issue = { webhookEvent: "jira:issue_created", issue: { key: "OPS-1" } };

describe("connections: Jira events", () => {
  const emu = useEmulator();
  let inbound = "";
  const cli = async (...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
    return { code: await runCli(argv, io), out, err };
  };
  const events = async () =>
    (await emu.api<{ events: unknown[] }>("/events?project=jira_events&limit=1000")).events.length;
  const sessions = async () =>
    (await emu.api<{ sessions: SessionRecord[] }>("/sessions?project=jira_events&limit=1000"))
      .sessions;
  /** A refusal: problem+json with `status`, nothing stored, nothing started. */
  const refused = async (init: RequestInit, status: number) => {
    const [e, s] = [await events(), (await sessions()).length];
    const res = await fetch(inbound, init);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect([await events(), (await sessions()).length]).toEqual([e, s]);
    return ((await res.json()) as { detail: string }).detail;
  };

  it("deploys with an inbound URL that refuses everything until the webhook's secret is set", async () => {
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
    const result = await emu.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    const line = result.lines.find((l) => l.includes('connection "jira": inbound path is'));
    // Neither authorized nor given a pasted token yet.
    expect(line).toMatch(/\(needs authorization\)$/);
    inbound = emu.url + result.connections[0]!.inbound_path;
    expect(await refused(jiraDelivery(SECRET, issue), 403)).toContain("no webhook_secret");
    const set = await cli(
      "var",
      "set",
      "--connection",
      "jira_events/jira",
      "--secret",
      "webhook_secret",
      SECRET,
    );
    expect(set.code).toBe(0);
  });

  it("starts the trigger's session with AutoKitteh's event type and the payload", async () => {
    const res = await fetch(inbound, jiraDelivery(SECRET, issue, { identifier: "d-1" }));
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    expect(session_ids).toHaveLength(1);
    expect((await emu.ended(session_ids[0]!)).state).toBe("completed");
    expect(await emu.prints(session_ids[0]!)).toEqual(["created OPS-1 as issue_created"]);
    // Jira's retry of the same delivery makes no second event.
    const before = await events();
    const again = await fetch(inbound, jiraDelivery(SECRET, issue, { identifier: "d-1" }));
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await events()).toBe(before);
  });

  it("refuses a forged, unsigned, tampered or malformed delivery", async () => {
    expect(await refused(jiraDelivery("not-the-secret", issue), 401)).toContain("does not match");
    const unsigned = jiraDelivery(SECRET, issue);
    delete (unsigned.headers as Record<string, string>)["x-hub-signature"];
    expect(await refused(unsigned, 401)).toBe("X-Hub-Signature is missing");
    const tampered = jiraDelivery(SECRET, issue);
    tampered.body = JSON.stringify({ ...issue, issue: { key: "OPS-666" } });
    await refused(tampered, 401);
    await refused(jiraDelivery(SECRET, { issue: {} }), 400);
  });

  it("hands comment_created to a subscriber of the connection", async () => {
    const hooks = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=jira_events",
    );
    const path = hooks.triggers.find((t) => t.name === "wait_comment")!.webhook_path;
    const { session_id } = (await (await fetch(emu.url + path, { method: "POST" })).json()) as {
      session_id: string;
    };
    await until("the subscription", async () =>
      (await emu.prints(session_id)).includes("subscribed"),
    );
    const comment = { webhookEvent: "comment_created", comment: { body: "on it" } };
    expect((await fetch(inbound, jiraDelivery(SECRET, comment))).status).toBe(202);
    expect((await emu.ended(session_id)).state).toBe("completed");
    expect(await emu.prints(session_id)).toEqual(["subscribed", "got comment_created on it"]);
  });
});
