import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeployResult } from "../src/deploy/index.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { pushTo, type StandInPubsub, standInPubsub } from "./support/google-pubsub.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { until } from "./support/until.ts";

/**
 * Two instances sharing one PostgreSQL (Redis the bus), both told of a Gmail connection's
 * changes and both waking when its watch's renewal is due: `users.watch` is called once and
 * renewed once (the database takes one instance's claim), and one Pub/Sub push delivered to
 * both instances at once reads the history once and makes one event, not two.
 */
const FIXTURE = `${import.meta.dirname}/fixtures/connections-pubsub`;
// Instances sharing a store share the key that seals its secrets.
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the Gmail watches' multi-instance suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const TOKEN = "gmail-cluster-token";
const publicUrl = "https://hooks.example.com"; // one public URL in front of both
const AUDIENCE = `${publicUrl}/google/pubsub/gmail`; // Pub/Sub's default: the push URL

describe.skipIf(!enabled)("Gmail watches on instances sharing one PostgreSQL", () => {
  let google: StandInPubsub;
  beforeAll(async () => {
    google = await standInPubsub(TOKEN, AUDIENCE);
    google.lifeMs = 8000; // the first watch's renewal is due 4 s after it is made
    process.env.SVC_GOOGLE_JWKS_URL = google.jwksUrl;
    process.env.SVC_GMAIL_PUBSUB_TOPIC = "projects/p/topics/gmail";
  });
  afterAll(async () => {
    delete process.env.SVC_GOOGLE_JWKS_URL;
    delete process.env.SVC_GMAIL_PUBSUB_TOPIC;
    await google.close();
  });
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500, publicUrl });
  const b = useEmulator({ storage, redisUrl, leaseMs: 1500, publicUrl });
  const put = (name: string, value: string, secret = false) =>
    a.api(`/envs/google_pubsub/vars/mail__${name}`, {
      method: "PUT",
      body: JSON.stringify({ value, secret }),
    });
  const vars = async () => {
    const { vars } = await b.api<{ vars: { name: string; value: string }[] }>(
      "/envs/google_pubsub/vars",
    );
    return Object.fromEntries(vars.map((x) => [x.name.replace(/^mail__/, ""), x.value]));
  };

  it("calls users.watch once and renews it once, though both instances wake for it", async () => {
    const manifest = [
      "version: v1",
      "project:",
      "  name: google_pubsub",
      "  connections:",
      "    - {name: mail, integration: gmail}",
      "  triggers:",
      "    - {name: on_mail, connection: mail, call: program.py:on_mail, is_durable: false}",
    ].join("\n");
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    await a.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    await put("base_url", google.url);
    await put("oauth_AccessToken", TOKEN, true);
    const first = await until(
      "the watch's expiry",
      async () => (await vars()).GmailWatchExpiration,
    );
    await new Promise((r) => setTimeout(r, 1000)); // time for a second watch call, if any
    expect(google.gmail.watches).toBe(1);
    google.lifeMs = 7 * 24 * 3600_000;
    await until("the renewal", async () => (await vars()).GmailWatchExpiration !== first, 20_000);
    await new Promise((r) => setTimeout(r, 1500)); // time for a second renewal, if any
    expect(google.gmail.watches).toBe(2);
  });

  it("makes one event of one push delivered to both instances at once", async () => {
    google.history.push({ id: "101", messagesAdded: [{ message: { id: "m1" } }] });
    const data = { emailAddress: "ada@example.com", historyId: 101 };
    const [ra, rb] = await Promise.all([
      pushTo(`${a.url}/google/pubsub/gmail`, google.token(), data, {}, "m-1"),
      pushTo(`${b.url}/google/pubsub/gmail`, google.token(), data, {}, "m-1"),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([200, 202]);
    const { events } = await a.api<{ events: { event_type: string }[] }>(
      "/events?project=google_pubsub&limit=10",
    );
    expect(events.map((e) => e.event_type)).toEqual(["mailbox_change"]);
    // The history was read from each cursor once: the second reader waited for the first's.
    const reads = google.calls.filter((c) => c.path.includes("/history?"));
    expect(reads.map((c) => /startHistoryId=(\d+)/.exec(c.path)![1])).toEqual(["100", "101"]);
    expect((await vars()).GmailHistoryID).toBe("101");
  });
});
