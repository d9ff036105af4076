import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DeployResult } from "../src/deploy/index.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { githubDelivery, slackRequest } from "./support/signing.ts";
import { until } from "./support/until.ts";

/**
 * Connections on two instances sharing one PostgreSQL (Redis the bus): a delivery that reaches B
 * is verified with the secret set through A, reaches a session subscribed on A, and a repeat sent
 * to the other instance makes no second event.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections");
// Instances sharing a store share the key that seals its secrets.
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the connections' multi-instance suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const GH_SECRET = "gh-s3cret-value";

describe.skipIf(!enabled)("connections on instances sharing one PostgreSQL (Redis the bus)", () => {
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500 });
  const b = useEmulator({ storage, redisUrl, leaseMs: 1500 });

  it("takes a delivery on B to a durable session subscribed on A, and a repeat on A once", async () => {
    const files = folderFiles(FIXTURE);
    const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
    delete files["autokitteh.yaml"];
    const result = await a.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    const path = (name: string) => result.connections.find((c) => c.name === name)!.inbound_path;
    // A secret set through A verifies Slack's requests on B.
    await a.api("/envs/conns/vars/sl__signing_secret", {
      method: "PUT",
      body: JSON.stringify({ value: "slack-k", secret: true }),
    });
    const body = JSON.stringify({
      type: "event_callback",
      event_id: "EvCLUSTER",
      event: { type: "app_mention", user: "U1", text: "across" },
    });
    expect((await fetch(b.url + path("sl"), slackRequest("slack-k", body))).status).toBe(200);
    expect((await fetch(a.url + path("sl"), slackRequest("slack-k", body))).status).toBe(200);
    const mentions = async () =>
      (
        await a.api<{ events: { event_type: string }[] }>("/events?project=conns&limit=1000")
      ).events.filter((e) => e.event_type === "app_mention");
    expect(await mentions()).toHaveLength(1);

    const hooks = await a.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=conns",
    );
    const waiter = hooks.triggers.find((t) => t.name === "wait_push")!;
    const res = await fetch(a.url + waiter.webhook_path, { method: "POST", body: "{}" });
    const { session_id } = (await res.json()) as { session_id: string };
    await until("the subscription", async () =>
      (await a.prints(session_id)).includes("subscribed"),
    );
    const push = githubDelivery(
      GH_SECRET,
      "push",
      { ref: "refs/heads/b" },
      { delivery: "d-cluster" },
    );
    expect((await fetch(b.url + path("gh"), push)).status).toBe(202);
    const repeat = await fetch(a.url + path("gh"), push);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    // Poked through B too: B's events reach A in the order B sent them, so a push that never
    // crossed shows as the poke arriving first.
    const poke = hooks.triggers.find((t) => t.name === "poke")!;
    expect((await fetch(b.url + poke.webhook_path, { method: "POST" })).status).toBe(202);
    const ended = await a.ended(session_id);
    expect(ended).toMatchObject({ state: "completed", durable: true });
    expect(await a.prints(session_id), 'the push on B reached subscribe("gh") on A').toEqual([
      "subscribed",
      "got push refs/heads/b",
    ]);
  });
});
