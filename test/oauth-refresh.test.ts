// The refresh of one connection's token by two instances of a fleet at the same moment, and
// what a refresh keeps: the service's OAuth side over real PostgreSQL storage and its once-claims
// (Redis the bus), against a token endpoint that counts what it is asked.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, postgresCluster } from "../src/cluster/cluster.ts";
import { keyedLock } from "../src/locks.ts";
import type { ProjectDoc } from "../src/model/records.ts";
import { createOAuth } from "../src/oauth/index.ts";
import { createSecretBox } from "../src/secrets.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { postgresTarget } from "../src/storage/drivers/postgres.ts";
import { createStores } from "../src/storage/records.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoPostgres } from "./support/postgres.ts";
import { REDIS_URL, redisTestPrefix, warnIfNoRedis } from "./support/redis.ts";
import { standInApi } from "./support/stand-in-api.ts";

const what = "the OAuth refresh across instances (one token request)";
const enabled = warnIfNoPostgres(what) && warnIfNoRedis(what);
const box = createSecretBox(randomBytes(32));
const log = { info: () => {}, warn: () => {}, error: () => {} };
const at = new Date().toISOString();

/** A project with one gmail connection whose token has expired. */
function project(refresh: string): ProjectDoc {
  const v = (name: string, value: string, secret = false) => ({
    env_id: "env_1",
    name: `mail__${name}`,
    value: secret ? box.seal(value) : value,
    secret,
    source: "cli" as const,
    updated_at: at,
  });
  return {
    project: { id: "prj_1", name: "p", created_at: at, updated_at: at } as ProjectDoc["project"],
    env: { id: "env_1", project_id: "prj_1", name: "default" } as ProjectDoc["env"],
    triggers: [],
    vars: [
      v("oauth_AccessToken", "old-access", true),
      v("oauth_RefreshToken", refresh, true),
      v("oauth_Expiry", "2000-01-01 00:00:00 +0000 UTC"),
      v("auth_type", "oauth"),
    ],
    connections: [
      {
        id: "con_1",
        name: "mail",
        integration: "gmail",
        inbound_id: "",
        created_at: at,
        updated_at: at,
      },
    ],
  };
}

describe.skipIf(!enabled)("OAuth refresh in a fleet (PostgreSQL, Redis the bus)", () => {
  let n = 0;
  const tokenEndpoint = standInApi({
    // Rotates: each refresh token is good once, and the answer names the next one.
    "POST /token": (_base, body) => {
      const form = new URLSearchParams(body);
      n++;
      if (form.get("refresh_token") !== `rt-${n - 1}`) return [400, { error: "invalid_grant" }];
      return [200, { access_token: `at-${n}`, refresh_token: `rt-${n}`, expires_in: 3600 }];
    },
  });
  const storageUrl = enabled ? postgresTestUrl() : "memory:";
  const storage = createStorageFromUrl(storageUrl);
  const stores = createStores(storage);
  const prefix = redisTestPrefix();
  const clusters: Cluster[] = [];
  let token: Awaited<typeof tokenEndpoint>;
  const instance = (i: number) =>
    createOAuth({
      projects: { stores, secrets: box, locks: keyedLock(), changed: () => {} },
      storage,
      cluster: clusters[i]!,
      settings: {
        GOOGLE_CLIENT_ID: "id",
        GOOGLE_CLIENT_SECRET: "secret",
        SVC_OAUTH_GOOGLE_TOKEN_URL: `${token.url}/token`,
      },
      log,
    });

  beforeAll(async () => {
    token = await tokenEndpoint;
    await storage.hasItem("meta:format-version"); // the tables, made at the first use
    const redis = { url: REDIS_URL!, base: prefix };
    const target = postgresTarget(storageUrl)!;
    for (let i = 0; i < 2; i++) clusters.push(await postgresCluster({ ...target, redis }));
  });
  afterAll(async () => {
    await token.close();
    for (const c of clusters) await c.dispose();
    await storage.dispose();
    await dropPostgresTestTables();
  });

  it("makes one token request for two instances refreshing at once, both get its token", async () => {
    await stores.projects.put(project("rt-0"));
    const [a, b] = [instance(0), instance(1)];
    const got = await Promise.all([
      a.tokens.refresh("prj_1", "mail", true),
      b.tokens.refresh("prj_1", "mail", true),
      a.tokens.refresh("prj_1", "mail", true),
    ]);
    expect(token.received).toHaveLength(1);
    expect(got.map((g) => g.token)).toEqual(["at-1", "at-1", "at-1"]);
  });

  it("saves the rotated refresh token: the next refresh, on the other instance, uses it", async () => {
    const t = await instance(1).tokens.refresh("prj_1", "mail", true);
    expect(t.token).toBe("at-2");
    const doc = (await stores.projects.get("prj_1"))!;
    const rt = doc.vars.find((v) => v.name === "mail__oauth_RefreshToken")!;
    expect(rt.secret).toBe(true);
    expect(box.open(rt.value)).toBe("rt-2");
    expect(JSON.stringify(doc)).not.toContain("at-2"); // sealed at rest
  });

  it("marks the connection needs_authorization on invalid_grant", async () => {
    await stores.projects.put(project("revoked"));
    await expect(instance(0).tokens.refresh("prj_1", "mail", true)).rejects.toThrow(
      /refused the refresh \(invalid_grant\)/,
    );
    const doc = (await stores.projects.get("prj_1"))!;
    expect(doc.vars.find((v) => v.name === "mail__oauth_status")?.value).toBe(
      "needs_authorization",
    );
  });

  it("asks the provider nothing before a session for a connection that needs authorization", async () => {
    const asked = token.received.length;
    const doc = (await stores.projects.get("prj_1"))!; // marked by the test above
    expect(await instance(1).tokens.freshen(doc)).toBe(false);
    expect(token.received).toHaveLength(asked);
  });
});
