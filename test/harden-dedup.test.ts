import { join } from "node:path";
import { createStorage } from "unstorage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DedupRecord, storageDedupStore } from "../src/routes/dedup.ts";
import { type EmulatorHandle, useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "harden");
process.env.SVC_SECRET_KEY ??= "00".repeat(32);

interface Accepted {
  event_id: string;
  session_id: string | null;
}

const post = (url: string, headers: Record<string, string>, body = "{}") =>
  fetch(url, { method: "POST", headers, body });

async function accepted(res: Response): Promise<Accepted & { replayed: boolean }> {
  expect(res.status).toBe(202);
  const body = (await res.json()) as Accepted;
  return { ...body, replayed: res.headers.get("idempotent-replayed") === "true" };
}

const unique = () => `${Date.now()}-${Math.random().toString(36).slice(2)}`;

async function counts(emu: EmulatorHandle) {
  const { events } = await emu.api<{ events: { trigger_name: string }[] }>(
    "/events?project=harden&limit=1000",
  );
  const { sessions } = await emu.api<{ sessions: unknown[] }>(
    "/sessions?project=harden&limit=1000",
  );
  return { events: events.length, sessions: sessions.length };
}

/** `n` concurrent deliveries with the same headers: all must get one and the same answer. */
async function concurrentRepeats(
  urlOf: (i: number) => string,
  headers: Record<string, string>,
  n = 20,
) {
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) => post(urlOf(i), headers).then(accepted)),
  );
  const ids = new Set(answers.map((a) => `${a.event_id}/${a.session_id}`));
  expect(ids.size).toBe(1);
  expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
  return answers[0]!;
}

describe("duplicate deliveries on one instance", () => {
  const emu = useEmulator();
  let urls: Record<string, string>;
  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  });

  for (const header of ["Idempotency-Key", "webhook-id"]) {
    it(`accepts concurrent repeats of one ${header} once: one event, one session`, async () => {
      const before = await counts(emu);
      const first = await concurrentRepeats(() => urls.hook!, { [header]: unique() });
      expect(first.session_id).toMatch(/^ses_/);
      expect(await counts(emu)).toEqual({
        events: before.events + 1,
        sessions: before.sessions + 1,
      });
    });
  }

  it("answers a later repeat with the first answer, marked Idempotent-Replayed", async () => {
    const key = { "Idempotency-Key": unique() };
    const first = await accepted(await post(urls.hook!, key));
    const again = await accepted(await post(urls.hook!, key));
    expect(again).toEqual({ ...first, replayed: true });
    expect(first.replayed).toBe(false);
  });

  it("dedupes on a trigger's dedup_header, and only on the trigger that names it", async () => {
    const delivery = { "X-GitHub-Delivery": unique() };
    const before = await counts(emu);
    const first = await concurrentRepeats(() => urls.gh!, delivery);
    const other = await accepted(await post(urls.gh!, { "X-GitHub-Delivery": unique() }));
    expect(other.event_id).not.toBe(first.event_id);
    // The hook trigger does not name X-GitHub-Delivery: two deliveries, two events.
    const h1 = await accepted(await post(urls.hook!, delivery));
    const h2 = await accepted(await post(urls.hook!, delivery));
    expect(h1.event_id).not.toBe(h2.event_id);
    expect((await counts(emu)).events).toBe(before.events + 4);
  });

  it("keeps keys per trigger: one key on two triggers is two deliveries", async () => {
    const key = { "Idempotency-Key": unique() };
    const a = await accepted(await post(urls.hook!, key));
    const b = await accepted(await post(urls.plain!, key));
    expect(a.event_id).not.toBe(b.event_id);
    expect(b.session_id).toBeNull();
  });

  it("sync: a repeat while the first runs gets 409; once answered, the stored outcome", async () => {
    const key = { "Idempotency-Key": unique() };
    const before = await counts(emu);
    const firstP = post(urls.slow_sync!, key);
    // Repeated once the first is on record (its key claimed before that), while it runs.
    await until("the first delivery's event", async () => {
      return (await counts(emu)).events === before.events + 1;
    });
    const early = await Promise.all([post(urls.slow_sync!, key), post(urls.slow_sync!, key)]);
    for (const res of early) {
      expect(res.status).toBe(409);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({
        status: 409,
        event_id: expect.stringMatching(/^evt_/),
      });
    }
    const first = await firstP;
    expect(first.status).toBe(201);
    const body = await first.text();
    const late = await post(urls.slow_sync!, key);
    expect(late.status).toBe(201);
    expect(await late.text()).toBe(body);
    expect(late.headers.get("x-first")).toBe(first.headers.get("x-first"));
    expect(late.headers.get("idempotent-replayed")).toBe("true");
    expect(await counts(emu)).toEqual({
      events: before.events + 1,
      sessions: before.sessions + 1,
    });
  });
});

describe("the dedup window (SVC_DEDUP_WINDOW = 1 s)", () => {
  const emu = useEmulator({ dedupWindowMs: 1000 });
  it("forgets a key after the window", async () => {
    const urls = await emu.deploy(FIXTURE);
    const key = { "Idempotency-Key": unique() };
    const first = await accepted(await post(urls.plain!, key));
    expect((await accepted(await post(urls.plain!, key))).event_id).toBe(first.event_id);
    await new Promise((r) => setTimeout(r, 1200));
    const later = await accepted(await post(urls.plain!, key));
    expect(later.event_id).not.toBe(first.event_id);
    expect(later.replayed).toBe(false);
  });
});

const fleet = warnIfNoFleet("the two-instance dedup test");
describe.skipIf(!fleet)(
  "duplicate deliveries across two instances on one PostgreSQL (Redis the bus)",
  () => {
    const { storage, redisUrl } = fleetStores();
    afterAll(dropPostgresTestTables);
    const a = useEmulator({ storage, redisUrl });
    const b = useEmulator({ storage, redisUrl });
    it("accepts concurrent repeats split over both instances once", async () => {
      const urls = await a.deploy(FIXTURE);
      const before = await counts(a);
      for (let round = 0; round < 3; round++) {
        const key = { "Idempotency-Key": unique() };
        const first = await concurrentRepeats(
          (i) => (i % 2 ? urls.hook!.replace(a.url, b.url) : urls.hook!),
          key,
        );
        expect(first.session_id).toMatch(/^ses_/);
      }
      expect(await counts(b)).toEqual({ events: before.events + 3, sessions: before.sessions + 3 });
    });
  },
);

describe("the embedded key store stays bounded", () => {
  it("keeps at most maxKeys keys, dropping the oldest, and forgets expired ones", async () => {
    const storage = createStorage();
    const store = storageDedupStore(storage, 3);
    const rec = (id: string, ttl = 60_000): DedupRecord => ({
      event_id: id,
      session_id: null,
      kind: "accepted",
      done: true,
      outcome: null,
      expires_at: Date.now() + ttl,
    });
    for (const k of ["a", "b", "c", "d", "e"]) expect(await store.claim(k, rec(k))).toBeNull();
    expect((await storage.getKeys("dedup")).length).toBe(3);
    expect(await store.get("a")).toBeNull();
    expect((await store.claim("e", rec("again")))?.event_id).toBe("e");
    expect(await store.claim("f", rec("f", 1))).toBeNull();
    await new Promise((r) => setTimeout(r, 5));
    expect(await store.get("f")).toBeNull();
    await store.dispose();
  });
});
