import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeployResult } from "../src/deploy/index.ts";
import { type StandInAtlassian, standInAtlassian } from "./support/atlassian.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { until } from "./support/until.ts";

/**
 * Two instances sharing one PostgreSQL (Redis the bus), both told of a jira OAuth connection's
 * change: the webhook is registered once, and renewed once, however many instances hear of it.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-jira");
// Instances sharing a store share the key that seals its secrets.
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the jira OAuth webhooks' multi-instance suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const TOKEN = "oauth-cluster-token";
const DAY = 24 * 3600_000;

describe.skipIf(!enabled)(
  "jira OAuth webhooks on instances sharing one PostgreSQL (Redis the bus)",
  () => {
    let atl: StandInAtlassian;
    beforeAll(async () => {
      atl = await standInAtlassian(TOKEN);
      process.env.SVC_OAUTH_JIRA_API_URL = atl.url;
    });
    afterAll(async () => {
      delete process.env.SVC_OAUTH_JIRA_API_URL;
      await atl.close();
    });
    // One public URL in front of both, as a fleet behind a router has.
    const publicUrl = "https://hooks.example.com";
    const a = useEmulator({ storage, redisUrl, leaseMs: 1500, publicUrl });
    const b = useEmulator({ storage, redisUrl, leaseMs: 1500, publicUrl });
    const put = (via: typeof a, name: string, value: string, secret = false) =>
      via.api(`/envs/jira_events/vars/jira__${name}`, {
        method: "PUT",
        body: JSON.stringify({ value, secret }),
      });
    const vars = async () => {
      const { vars } = await b.api<{ vars: { name: string; value: string }[] }>(
        "/envs/jira_events/vars",
      );
      return Object.fromEntries(vars.map((x) => [x.name.replace(/^jira__/, ""), x.value]));
    };
    const count = (method: string) => atl.calls.filter((c) => c.method === method).length;

    it("registers once and renews once, though both instances hear of each change", async () => {
      const files = folderFiles(FIXTURE);
      delete files["autokitteh.yaml"];
      const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
      const result = await a.api<DeployResult>("/deploy", {
        method: "POST",
        body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
      });
      await put(a, "oauth_AccessToken", TOKEN, true);
      await until("the webhook's id", async () => (await vars()).WebhookID);
      await new Promise((r) => setTimeout(r, 1000)); // time for a second registration, if any
      expect(count("POST")).toBe(1);
      expect(atl.webhooks[0]!.url).toBe(`${publicUrl}${result.connections[0]!.inbound_path}`);

      const soon = new Date(Date.now() + 2 * DAY).toISOString().replace(/\.\d{3}Z$/, "Z");
      await put(b, "WebhookExpiration", soon);
      await until("the renewal", async () => {
        return Date.parse((await vars()).WebhookExpiration!) > Date.now() + 29 * DAY;
      });
      await new Promise((r) => setTimeout(r, 1000));
      expect(count("PUT")).toBe(1);
      expect(count("POST")).toBe(1);
    });
  },
);
