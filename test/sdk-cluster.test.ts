import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../src/model/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { until } from "./support/until.ts";

/**
 * The SDK's requests across two instances on one PostgreSQL (Redis the bus): signals over the bus,
 * one store.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "sdk");
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the SDK's multi-instance tests");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const post = (url: string, body: unknown = {}) =>
  fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });

describe.skipIf(!enabled)("the SDK across instances sharing one PostgreSQL (Redis the bus)", () => {
  const a = useEmulator({ storage, redisUrl, leaseMs: 1500, evictAfterMs: -1 });
  const b = useEmulator({ storage, redisUrl, leaseMs: 1500, evictAfterMs: -1 });
  let urls: Record<string, string>;
  const onB = (url: string) => url.replace(a.url, b.url);

  it("delivers a signal sent from B to a session waiting on A", async () => {
    urls = await a.deploy(FIXTURE);
    const { session_id } = (await (await post(urls.wait_n!)).json()) as { session_id: string };
    await until("the session to run on A", async () => {
      const { session } = await a.api<{ session: SessionRecord }>(`/sessions/${session_id}`);
      return session.state === "running";
    });
    const sent = await post(onB(urls.send!), { session_id, name: "stop", payload: "from B" });
    expect(sent.status).toBe(200);
    const rec = await a.ended(session_id);
    expect(rec.state).toBe("completed");
    expect(rec.outcome_value).toEqual({ name: "stop", payload: "from B" });
  });

  it("keeps one store for both instances: adds from A and B all count", async () => {
    urls ??= await a.deploy(FIXTURE);
    const hits = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(i % 2 ? onB(urls.store_n!) : urls.store_n!, { key: "shared" }).then(
          async (r) => ((await r.json()) as { n: number }).n,
        ),
      ),
    );
    expect(hits.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    const { value } = await b.api<{ value: unknown }>("/projects/sdkwire/store/shared");
    expect(value).toBe(6);
  });
});
