// One key for every instance: a service started with another SVC_SECRET_KEY than the one its
// store's sealed data was written with refuses to start, naming the setting, and leaves the store
// as it was: on one data home (a restart with another key) and on a store shared by instances
// (Redis, PostgreSQL). A durable session parked under the right key still finishes afterwards.
// Real services, real Python (docs/limits.md, docs/configuration.md).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../emulator/start.ts";
import { resolveSettings } from "../src/config.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { stepKey } from "../src/storage/session-records.ts";
import { defaultStorageUrl } from "../src/storage-url.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoFleet } from "./support/postgres.ts";
import { deployFolder } from "./support/process.ts";
import { testPython } from "./support/python.ts";
import { redisTestUrl } from "./support/redis.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "secret-key");
const KEY_A = "aa".repeat(32);
const KEY_B = "bb".repeat(32);
afterAll(dropPostgresTestTables);

async function start(
  key: string,
  dataHome: string,
  over: { storage?: string; redisUrl?: string },
): Promise<Emulator> {
  const before = process.env.SVC_SECRET_KEY;
  process.env.SVC_SECRET_KEY = key;
  try {
    const flags = { mode: "dev" as const, port: 0, dataHome, configHome: join(dataHome, "config") };
    const settings = resolveSettings({ ...flags, workerPython: await testPython(), ...over }, {});
    return await startEmulator(settings, { log: () => {} });
  } finally {
    if (before === undefined) delete process.env.SVC_SECRET_KEY;
    else process.env.SVC_SECRET_KEY = before;
  }
}

async function get<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return (await res.json()) as T;
}

/** Deploys the fixture and starts a durable session that seals a step and waits for `wake`. */
async function parkOne(url: string): Promise<{ session: string; wake: string }> {
  expect((await deployFolder(url, FIXTURE)).status).toBe(200);
  const { triggers } = await get<{ triggers: { name: string; webhook_path: string }[] }>(
    `${url}/api/v1/triggers?project=keyed`,
  );
  const path = (name: string) => url + triggers.find((t) => t.name === name)!.webhook_path;
  const res = await fetch(path("parked"), { method: "POST", body: "{}" });
  const { session_id } = (await res.json()) as { session_id: string };
  // Waiting in next_event: its activity's result (sealed) and its subscription are journaled.
  await until("the session to wait for its event", async () => {
    const { entries } = await get<{ entries: unknown[] }>(
      `${url}/api/v1/sessions/${session_id}/log`,
    );
    return JSON.stringify(entries).includes('"subscribe"');
  });
  return { session: session_id, wake: path("wake") };
}

async function refusal(p: Promise<Emulator>): Promise<Error> {
  const err = await p.then(
    async (e) => {
      await e.close();
      return null;
    },
    (e: unknown) => e as Error,
  );
  expect(err, "the instance with another key started").not.toBeNull();
  return err!;
}

async function wakeAndFinish(url: string, wake: string, session: string) {
  await fetch(wake, { method: "POST", body: "go" });
  const record = await until("the session to end", async () => {
    const { session: s } = await get<{ session: { state: string } }>(
      `${url}/api/v1/sessions/${session}`,
    );
    return s.state !== "running" && s.state !== "created" && s;
  });
  expect(record.state).toBe("completed");
  const { prints } = await get<{ prints: { text: string }[] }>(
    `${url}/api/v1/sessions/${session}/prints`,
  );
  expect(prints.map((p) => p.text)).toEqual(["token 12, woke with go"]);
}

describe("a data home restarted with another SVC_SECRET_KEY", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-key-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("refuses to start naming SVC_SECRET_KEY; with its own key the parked session finishes", async () => {
    const first = await start(KEY_A, home, {});
    const { session, wake } = await parkOne(first.url);
    await first.close();
    const err = await refusal(start(KEY_B, home, {}));
    expect(err.message).toMatch(/^SVC_SECRET_KEY does not match the key this store's sealed data/);
    const again = await start(KEY_A, home, {});
    try {
      await wakeAndFinish(again.url, wake.replace(first.url, again.url), session);
    } finally {
      await again.close();
    }
  }, 180_000);
});

describe("a session whose record or journal cannot be read", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-key-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  /** Replaces the parked session's sealed activity step (the service is stopped). */
  async function damage(session: string, value: (step: object) => unknown) {
    const storage = createStorageFromUrl(defaultStorageUrl(home));
    try {
      const steps = await createStores(storage).journals.list(session);
      const step = steps.find((s) => s.kind === "activity")!;
      await storage.setItem(stepKey(session, step.seq), value(step) as string);
    } finally {
      await storage.dispose();
    }
  }

  const cases = [
    {
      name: "sealed data that does not open",
      value: (step: object) => ({
        ...step,
        result: "sealed:v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA==:AAAA",
      }),
      error:
        /^the journal's step \d+ cannot be read: .*\(sealed with another SVC_SECRET_KEY, or damaged\)$/,
    },
    {
      name: "damaged JSON",
      value: () => '{"seq": 1, "kind": "activ',
      error: /^the journal's step \d+ cannot be read: it is not a journal step$/,
    },
  ];

  it("ends in error saying why when its record is damaged JSON, not running with no process", async () => {
    const first = await start(KEY_A, home, {});
    const { session } = await parkOne(first.url);
    await first.close();
    const storage = createStorageFromUrl(defaultStorageUrl(home));
    await storage.setItem(`sessions:${session}`, '{"id": "ses_', {});
    await storage.dispose();
    const again = await start(KEY_A, home, {});
    try {
      const { session: s } = await get<{
        session: { state: string; error: { message: string } | null };
      }>(`${again.url}/api/v1/sessions/${session}`);
      expect(s.state).toBe("error");
      expect(s.error?.message).toBe(
        "the session's record cannot be read: it is not a session record",
      );
      const { sessions } = await get<{ sessions: { id: string }[] }>(
        `${again.url}/api/v1/sessions?project=keyed&state=running`,
      );
      expect(sessions.map((x) => x.id)).not.toContain(session);
    } finally {
      await again.close();
    }
  }, 180_000);

  for (const c of cases) {
    it(`ends in error saying why (${c.name}), not running with no process`, async () => {
      const first = await start(KEY_A, home, {});
      const { session } = await parkOne(first.url);
      await first.close();
      await damage(session, c.value);
      const again = await start(KEY_A, home, {});
      try {
        const record = await until("the session to end", async () => {
          const { session: s } = await get<{
            session: { state: string; error: { message: string } | null };
          }>(`${again.url}/api/v1/sessions/${session}`);
          return s.state !== "running" && s.state !== "created" && s;
        });
        expect(record.state).toBe("error");
        expect(record.error?.message).toMatch(c.error);
      } finally {
        await again.close();
      }
    }, 180_000);
  }
});

// Several instances share a store on PostgreSQL only (Redis alone serves one instance: a second
// is refused before it reads a key, test/redis-alone.test.ts).
const shared = [
  {
    name: "PostgreSQL",
    enabled: () => warnIfNoFleet("the shared-key tests on PostgreSQL"),
  },
];

for (const store of shared) {
  describe.skipIf(!store.enabled())(`instances sharing ${store.name}`, () => {
    const homes = [0, 1].map(() => mkdtempSync(join(tmpdir(), "hookline-key-")));
    afterAll(() => {
      for (const h of homes) rmSync(h, { recursive: true, force: true });
    });

    it("a second instance with another key refuses to start; the first goes on", async () => {
      const over = { storage: postgresTestUrl(), redisUrl: redisTestUrl() };
      const a = await start(KEY_A, homes[0]!, over);
      try {
        const { session, wake } = await parkOne(a.url);
        const err = await refusal(start(KEY_B, homes[1]!, over));
        expect(err.message).toMatch(/^SVC_SECRET_KEY does not match/);
        await wakeAndFinish(a.url, wake, session);
      } finally {
        await a.close();
      }
    }, 180_000);
  });
}
