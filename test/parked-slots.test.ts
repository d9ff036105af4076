import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Fleet } from "./support/fleet.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { untilEach } from "./support/until.ts";

/**
 * Two instances of one slot each (`SVC_MAX_SESSIONS=1`) on PostgreSQL: a durable session that
 * waits in `next_event` gives up its process (parked) and its slot with it, so instances whose
 * every slot once held a waiter still take queued sessions off the shared queue.
 */
const TOKEN = "parked-slots-token";
const enabled = warnIfNoFleet("the parked-slots test");
afterAll(dropPostgresTestTables);

const MANIFEST = `version: v2
project:
  name: parked_slots
triggers:
  - name: waiter
    type: webhook
    call: handlers.py:waiter
    is_durable: true
  - name: wake
    type: webhook
  - name: quick
    type: webhook
    call: handlers.py:quick
`;
const HANDLERS = `import workflow_sdk


def waiter(event):
    key = event.data.body.text
    sub = workflow_sdk.subscribe("wake", f'data.body.text == "{key}"')
    workflow_sdk.next_event(sub)


def quick(event):
    print("quick", event.data.body.text)
`;

describe.skipIf(!enabled)("parked sessions and the shared queue", () => {
  let fleet: Fleet;
  let hooks: Record<string, string> = {};
  const headers = { authorization: `Bearer ${TOKEN}` };

  beforeAll(async () => {
    const { storage, redisUrl } = fleetStores();
    fleet = new Fleet({
      SVC_STORAGE: storage,
      SVC_REDIS_URL: redisUrl ?? "",
      SVC_SECRET_KEY: "00".repeat(32),
      SVC_API_TOKEN: TOKEN,
      SVC_WORKER_PYTHON: await testPython(),
      SVC_MAX_SESSIONS: "1",
      SVC_EVICT_AFTER: "0.5",
    });
    await fleet.start(2);
    hooks = await fleet.deploySource(MANIFEST, { "handlers.py": HANDLERS }, TOKEN);
  }, 240_000);

  afterAll(async () => {
    await fleet?.dispose();
  }, 30_000);

  const post = async (trigger: string, body: string) => {
    const res = await fetch(fleet.url + hooks[trigger], { method: "POST", body });
    expect(res.status).toBe(202);
    return ((await res.json()) as { session_id: string | null }).session_id;
  };
  const parked = () => fleet.parked(TOKEN);
  const state = async (id: string) => {
    const res = await fetch(`${fleet.url}/api/v1/sessions/${id}`, { headers });
    return res.ok ? ((await res.json()) as { session: { state: string } }).session.state : "";
  };

  it("takes queued sessions while every slot's waiter is parked", async () => {
    // Two waiters, one after the other parked: one for each instance's only slot, at least.
    for (const key of ["w1", "w2"]) {
      const before = await parked();
      await post("waiter", key);
      await untilEach(`waiter ${key} to park`, [key], async () => (await parked()) > before);
    }
    const quick = [];
    for (let i = 0; i < 4; i++) quick.push((await post("quick", `q${i}`))!);
    await untilEach(
      "the quick sessions to complete",
      quick,
      async (id) => (await state(id)) === "completed",
    );
    // And the waiters are still there to wake.
    for (const key of ["w1", "w2"]) await post("wake", key);
    await untilEach("the waiters to wake", [0], async () => (await parked()) === 0);
  }, 180_000);
});
