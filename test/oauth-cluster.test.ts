// Two instances on one PostgreSQL (Redis the bus) refresh one connection's token at the same
// moment: one token request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserJar } from "./support/browser-jar.ts";
import { useEmulator } from "./support/emulator.ts";
import { digest, gmailProject, googleClient, googleSettings } from "./support/oauth-project.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";

// Instances sharing a store share the key that seals its secrets.
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the OAuth refresh across instances");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const saved = { ...process.env };

describe.skipIf(!enabled)(
  "OAuth refresh on instances sharing one PostgreSQL (Redis the bus)",
  () => {
    const a = useEmulator({ storage, redisUrl, leaseMs: 1500 });
    const b = useEmulator({ storage, redisUrl, leaseMs: 1500 });
    let oidc: OidcServer;
    let triggers: Record<string, string>;

    beforeAll(async () => {
      oidc = await oidcServer([googleClient(a.url)]);
      Object.assign(process.env, googleSettings(oidc.url));
      triggers = await a.deploy(gmailProject("mailbox_cluster"));
    }, 120_000);
    afterAll(async () => {
      process.env = saved;
      await oidc?.close();
    });

    it("takes a state once: the provider's callback at both instances at once, one goes through", async () => {
      const { connections } = await a.api<{ connections: { id: string }[] }>(
        "/connections?project=mailbox_cluster",
      );
      const jar = browserJar();
      const start = `${a.url}/oauth/start/gmail?cid=${connections[0]!.id}`;
      const atProvider = await jar.follow(start, { until: (u) => u.startsWith(oidc.url) });
      // The provider's answer, stopped before the browser brings it back to the service.
      const back = await jar.follow(atProvider.url, { until: (u) => u.startsWith(a.url) });
      const callback = new URL(back.url);
      const cookie = [...jar.cookies].map(([n, c]) => `${n}=${c.value}`).join("; ");
      const before = oidc.grants.length;
      // Four at each instance. Here the moment when two of them have both read the state is
      // narrow (one event loop, a quick Redis); src/oauth/flow.test.ts makes it certain, and
      // fails when the claim across instances goes. This checks the whole path on real parts.
      const answers = await Promise.all(
        [a, b, a, b, a, b, a, b].map(async (emu) => {
          const res = await fetch(emu.url + callback.pathname + callback.search, {
            headers: { cookie },
            redirect: "manual",
          });
          return { status: res.status, text: await res.text() };
        }),
      );
      const statuses = answers.map((x) => x.status).sort();
      expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
      for (const x of answers.filter((x) => x.status === 400)) {
        expect(x.text).toMatch(/unknown, used or expired/);
      }
      expect(oidc.grants.length - before).toBe(1); // one code exchange
    });

    it("makes one refresh when sessions on both instances start with an expired token", async () => {
      const { connections } = await a.api<{ connections: { id: string }[] }>(
        "/connections?project=mailbox_cluster",
      );
      const start = `${a.url}/oauth/start/gmail?cid=${connections[0]!.id}`;
      expect((await browserJar().follow(start)).status).toBe(200);
      // The token ran out: both instances see it so at the next session.
      await a.api("/envs/mailbox_cluster/vars/gmail_conn__oauth_Expiry", {
        method: "PUT",
        body: JSON.stringify({ value: "2000-01-01 00:00:00 +0000 UTC", secret: false }),
      });
      const before = oidc.grants.length;
      const path = new URL(triggers.env_token!).pathname;
      const started = await Promise.all(
        [a, b, a, b].map(async (emu) => {
          const res = await fetch(emu.url + path, { method: "POST" });
          return { emu, id: ((await res.json()) as { session_id: string }).session_id };
        }),
      );
      const prints = await Promise.all(
        started.map(async ({ emu, id }) => {
          expect((await emu.ended(id)).state).toBe("completed");
          return emu.prints(id);
        }),
      );
      const grants = oidc.grants.slice(before);
      expect(grants.map((g) => g.grant_type)).toEqual(["refresh_token"]);
      const fresh = `env token: ${digest(grants[0]!.access_token)}`;
      const each = [fresh, "client secret here: False False"];
      expect(prints).toEqual([each, each, each, each]);
    });
  },
);
