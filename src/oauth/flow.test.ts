import { createHash, randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import { describe, expect, it } from "vitest";
import { oneConnectionProject } from "../../test/support/records.ts";
import { standInApi } from "../../test/support/stand-in-api.ts";
import { type Cluster, localCluster } from "../cluster/cluster.ts";
import { keyedLock } from "../locks.ts";
import { presetOf } from "../providers/oauth-presets.ts";
import { createSecretBox } from "../secrets.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { oauthClient } from "./client.ts";
import type { Authorized } from "./hooks.ts";
import { createOAuth } from "./service.ts";

const doc = oneConnectionProject("ms", "microsoft");

/** The OAuth side over memory storage, a clock the test moves, a token endpoint that records. */
async function setUp(
  client: Record<string, string> = {
    MICROSOFT_CLIENT_ID: "ms-app",
    MICROSOFT_CLIENT_SECRET: "ms-secret",
  },
  project = doc,
) {
  const box = createSecretBox(randomBytes(32));
  const stores = createStores(createStorage());
  await stores.projects.put(structuredClone(project));
  const api = await standInApi({
    "POST /token": () => [200, { access_token: "at-1", refresh_token: "rt-1", expires_in: 3600 }],
  });
  const clock = { now: Date.UTC(2026, 10, 28) };
  const settings = {
    ...client,
    SVC_OAUTH_MICROSOFT_TOKEN_URL: `${api.url}/token`,
    SVC_OAUTH_GOOGLE_TOKEN_URL: `${api.url}/token`,
  };
  const instance = (cluster: Cluster = localCluster()) =>
    oauthOver(stores, box, clock, settings, cluster);
  return { oauth: instance(), instance, api, stores, box, clock };
}

/** One instance's OAuth side over `stores` (instances sharing them share the states). */
function oauthOver(
  stores: Stores,
  box: ReturnType<typeof createSecretBox>,
  clock: { now: number },
  settings: Record<string, string>,
  cluster: Cluster,
) {
  return createOAuth({
    projects: { stores, secrets: box, locks: keyedLock(), changed: () => {} },
    storage: stores.storage,
    cluster,
    settings,
    log: { info: () => {}, warn: () => {}, error: () => {} },
    now: () => clock.now,
  });
}

/**
 * A stand-in for the coordination instances share (Redis in a fleet): `once` is true for the
 * first asker of a key only, as Redis's SET NX is; the rest as one instance alone.
 */
function sharedCluster(): Cluster {
  const taken = new Set<string>();
  return {
    ...localCluster(),
    shared: true,
    once: async (key) => {
      await new Promise((r) => setImmediate(r)); // a round trip, as to Redis
      if (taken.has(key)) return false;
      taken.add(key);
      return true;
    },
  };
}

/** A refusal's status and message, or null when `p` went through. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { status: number; message: string }) => [e.status, e.message],
  );

describe("the authorization flow", () => {
  it("sends PKCE, exchanges the code with the verifier, saves the modern scheme, then tells onAuthorized", async () => {
    const { oauth, api, stores, box } = await setUp();
    const heard: Authorized[] = [];
    oauth.onAuthorized((a) => void heard.push(a));
    oauth.onAuthorized(() => {
      throw new Error("a listener's failure undoes nothing");
    });
    const { url } = await oauth.flow.start("con_1", "microsoft", "http://svc", "cookie-1");
    const q = new URL(url).searchParams;
    expect(q.get("redirect_uri")).toBe("http://svc/oauth/redirect/microsoft");
    expect(q.get("code_challenge_method")).toBe("S256");
    await oauth.flow.finish("microsoft", { state: q.get("state")!, code: "c1" }, "cookie-1");
    const sent = new URLSearchParams(api.received[0]!.body);
    const verifier = sent.get("code_verifier")!;
    expect(createHash("sha256").update(verifier).digest("base64url")).toBe(q.get("code_challenge"));
    const vars = (await stores.projects.get("prj_1"))!.vars;
    const v = (n: string) => vars.find((x) => x.name === `ms__${n}`)!;
    expect(box.open(v("oauth_access_token").value)).toBe("at-1");
    expect(v("oauth_expiry").value).toBe("2026-11-28T01:00:00Z");
    expect(v("auth_type").value).toBe("oauthDefault");
    expect(v("oauth_access_token").source).toBe("cli"); // kept across redeploys
    expect(heard).toEqual([
      expect.objectContaining({
        projectId: "prj_1",
        connection: "ms",
        connectionId: "con_1",
        integration: "microsoft",
      }),
    ]);
    expect(heard[0]!.preset?.name).toBe("microsoft");
    await api.close();
  });

  it("refuses a state older than 10 minutes, and changes nothing", async () => {
    const { oauth, api, stores, clock } = await setUp();
    const { url } = await oauth.flow.start("con_1", "microsoft", "http://svc", "c");
    clock.now += 10 * 60_000 + 1;
    const state = new URL(url).searchParams.get("state")!;
    await expect(oauth.flow.finish("microsoft", { state, code: "x" }, "c")).rejects.toThrow(
      /unknown, used or expired/,
    );
    expect((await stores.projects.get("prj_1"))!.vars).toEqual([]);
    expect(api.received).toEqual([]);
    await api.close();
  });

  it("refuses to start for another integration's path, or without a client to authorize with", async () => {
    const { oauth, api } = await setUp();
    expect(await refusal(oauth.flow.start("con_1", "gmail", "http://svc", "c"))).toEqual([
      400,
      "ms is a microsoft connection",
    ]);
    expect(await refusal(oauth.flow.start("con_9", "microsoft", "http://svc", "c"))).toEqual([
      404,
      'no connection "con_9"',
    ]);
    const bare = await setUp({} as never);
    const [status, message] = (await refusal(
      bare.oauth.flow.start("con_1", "microsoft", "x", "c"),
    ))!;
    expect(status).toBe(409);
    expect(message).toMatch(/set MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET/);
    await api.close();
    await bare.api.close();
  });
});

describe("a state is taken once", () => {
  /** Starts an authorization on `oauth` and returns the state the provider would send back. */
  async function stateOf(oauth: ReturnType<typeof createOAuth>, cookie = "c") {
    const { url } = await oauth.flow.start("con_1", "microsoft", "http://svc", cookie);
    return new URL(url).searchParams.get("state")!;
  }

  it("two simultaneous callbacks with one state on one instance: one goes through", async () => {
    const { oauth, api } = await setUp();
    const state = await stateOf(oauth);
    const both = await Promise.all(
      [1, 2].map(() => refusal(oauth.flow.finish("microsoft", { state, code: "c1" }, "c"))),
    );
    expect(both.filter((r) => r === null)).toHaveLength(1);
    expect(both).toContainEqual([400, "this authorization is unknown, used or expired"]);
    expect(api.received).toHaveLength(1); // one code exchange
    await api.close();
  });

  it("two simultaneous callbacks with one state on two instances sharing a store: one goes through", async () => {
    const { instance, api } = await setUp();
    const cluster = sharedCluster();
    const [a, b] = [instance(cluster), instance(cluster)];
    for (let round = 0; round < 5; round++) {
      const state = await stateOf(a);
      const both = await Promise.all(
        [a, b].map((o) => refusal(o.flow.finish("microsoft", { state, code: "c1" }, "c"))),
      );
      expect(both.filter((r) => r === null)).toHaveLength(1);
    }
    expect(api.received).toHaveLength(5);
    await api.close();
  });
});

describe("the callback's path", () => {
  it("refuses a Google state at /oauth/redirect/microsoft, and changes nothing", async () => {
    const google = oneConnectionProject("mail", "gmail");
    const client = { GOOGLE_CLIENT_ID: "g-app", GOOGLE_CLIENT_SECRET: "g-secret" };
    const { oauth, api, stores } = await setUp(client, google);
    const { url } = await oauth.flow.start("con_1", "gmail", "http://svc", "c");
    const state = new URL(url).searchParams.get("state")!;
    expect(await refusal(oauth.flow.finish("microsoft", { state, code: "c1" }, "c"))).toEqual([
      400,
      "the callback does not match this authorization",
    ]);
    expect((await stores.projects.get("prj_1"))!.vars).toEqual([]);
    expect(api.received).toEqual([]);
    // The same callback at Google's path goes through.
    const again = new URL((await oauth.flow.start("con_1", "gmail", "http://svc", "c")).url);
    const ok = oauth.flow.finish(
      "google",
      { state: again.searchParams.get("state")!, code: "c1" },
      "c",
    );
    expect(await refusal(ok)).toBeNull();
    await api.close();
  });
});

describe("the Microsoft tenant", () => {
  const MS = { MICROSOFT_CLIENT_ID: "ms-app", MICROSOFT_CLIENT_SECRET: "ms-secret" };
  /** Where `start` sends the browser, with the connection's vars `vars` and the service's `env`. */
  async function startPath(env: Record<string, string>, vars: Record<string, string> = {}) {
    const { oauth, api, stores } = await setUp({ ...MS, ...env });
    const stored = (await stores.projects.get("prj_1"))!;
    stored.vars = Object.entries(vars).map(([name, value]) => ({
      env_id: "env_1",
      name: `ms__${name}`,
      value,
      secret: false,
      source: "cli" as const,
      updated_at: stored.project.updated_at,
    }));
    await stores.projects.put(stored);
    await api.close();
    const started = oauth.flow.start("con_1", "microsoft", "http://svc", "c");
    return started.then(
      ({ url }) => new URL(url).origin + new URL(url).pathname,
      (e: { status: number; message: string }) => `${e.status} ${e.message}`,
    );
  }
  const authorizeAt = (tenant: string) =>
    `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`;

  it("is common unless the service's MICROSOFT_TENANT_ID or the connection's private_tenant_id says", async () => {
    expect(await startPath({})).toBe(authorizeAt("common"));
    expect(await startPath({ MICROSOFT_TENANT_ID: "contoso.onmicrosoft.com" })).toBe(
      authorizeAt("contoso.onmicrosoft.com"),
    );
    const guid = "72f988bf-86f1-41af-91ab-2d7cd011db47";
    const env = { MICROSOFT_TENANT_ID: "contoso.onmicrosoft.com" };
    expect(await startPath(env, { private_tenant_id: guid })).toBe(authorizeAt(guid));
    expect(await startPath({}, { tenant_id: "organizations" })).toBe(authorizeAt("organizations"));
  });

  it("refreshes at the same tenant's token URL", () => {
    const vars = (n: string) => (n === "private_tenant_id" ? "fabrikam.com" : undefined);
    expect(oauthClient(MS, presetOf("microsoft")!, vars).tokenUrl).toBe(
      "https://login.microsoftonline.com/fabrikam.com/oauth2/v2.0/token",
    );
  });

  it("refuses a tenant that is no id or domain, naming what to set", async () => {
    expect(await startPath({}, { private_tenant_id: "evil.com/x?" })).toBe(
      "409 the Microsoft tenant \"evil.com/x?\" is no tenant id or domain: set the connection's private_tenant_id, or the service's MICROSOFT_TENANT_ID",
    );
  });
});
