// What an accepted webhook costs storage and when its session starts: the event and the
// session's first record are one commit before the 202; a commit that fails answers 503 and
// leaves neither a stored event nor a session that runs; the session's process is asked for
// only once the 202 has gone. In process (`app.request`), the fake runtime, a memory storage
// whose atomic batches can be held or made to fail.
import { randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import { describe, expect, it } from "vitest";
import { composeApp } from "../src/platform/compose.ts";
import { createSecretBox } from "../src/secrets.ts";
import type { BatchOp } from "../src/storage/drivers/lmdb.ts";
import { memoryDriver } from "../src/storage/drivers/memory.ts";
import { deployBody } from "./support/app.ts";
import { fakeRuntime } from "./support/fake-runtime.ts";

const MANIFEST = `
version: v2
project:
  name: accepted
triggers:
  - name: hook
    type: webhook
    call: handlers.py:on_post
  - name: quiet
    type: webhook
`;
const FILES = { "handlers.py": "def on_post(event):\n    pass\n" };

/** A memory storage whose batches are counted, and may wait for `gate`; its writes may fail. */
function gatedStorage() {
  const driver = memoryDriver();
  const batches: BatchOp[][] = [];
  const state = {
    gate: null as Promise<void> | null,
    fail: false,
  };
  const batch = driver.batch.bind(driver);
  driver.batch = async (ops) => {
    if (state.fail) throw new Error("disk on fire");
    await state.gate;
    batches.push(ops);
    return batch(ops);
  };
  const setItem = driver.setItem!.bind(driver);
  driver.setItem = (key, value, opts) => {
    if (state.fail) throw new Error("disk on fire");
    return setItem(key, value, opts);
  };
  return { storage: createStorage({ driver }), batches, state };
}

async function setup() {
  const fake = fakeRuntime({ "handlers.py:on_post": () => {} });
  const gated = gatedStorage();
  const hook = composeApp({
    services: {
      storage: gated.storage,
      runtime: fake.runtime,
      secrets: createSecretBox(randomBytes(32)),
    },
  });
  expect((await hook.app.request("/api/v1/deploy", deployBody(MANIFEST, FILES))).status).toBe(200);
  const res = await hook.app.request("/api/v1/triggers?project=accepted");
  const { triggers } = (await res.json()) as {
    triggers: { name: string; webhook_path: string }[];
  };
  const path = (name: string) => triggers.find((t) => t.name === name)!.webhook_path;
  const post = () => hook.app.request(path("hook"), { method: "POST", body: '{"n":1}' });
  const events = async () => (await hook.stores.events.keys()).length;
  return { fake, hook, post, events, path, ...gated };
}

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe("an accepted webhook", () => {
  it("is one commit before its 202: the event and the session's first record together", async () => {
    const { hook, post, batches } = await setup();
    batches.length = 0;
    const res = await post();
    expect(res.status).toBe(202);
    const { event_id, session_id } = (await res.json()) as Record<string, string>;
    expect(batches).toHaveLength(1);
    const keys = batches[0]!.map((op) => op.key);
    expect(keys[0]).toBe(`events:${event_id}`);
    expect(keys).toContain(`sessions:${session_id}`);
    expect((await hook.stores.sessions.get(session_id!))?.state).toBe("created");
    await hook.sessions.whenEnded(session_id!);
  });

  it("asks for the session's process only once the 202 has gone", async () => {
    const { fake, hook, post, state } = await setup();
    let open = () => {};
    state.gate = new Promise<void>((r) => {
      open = r;
    });
    const answer = post();
    await ticks(5);
    expect(fake.started).toHaveLength(0); // the commit is not in: nothing runs
    open();
    const res = await answer;
    expect(res.status).toBe(202);
    expect(fake.started).toHaveLength(0); // answered first
    const { session_id } = (await res.json()) as Record<string, string>;
    expect((await hook.sessions.whenEnded(session_id!))?.state).toBe("completed");
    expect(fake.started).toHaveLength(1);
  });

  it("answers 503 when its commit fails, with neither the event stored nor a session run", async () => {
    const { fake, hook, post, events, path, state } = await setup();
    const before = await events();
    state.fail = true;
    const res = await post();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      "storage is unavailable; retry later",
    );
    await ticks(10);
    expect(fake.started).toHaveLength(0);
    expect(await events()).toBe(before);
    expect(await hook.stores.sessions.list({})).toEqual([]);
    expect(hook.sessions.activeCount).toBe(0);
    // An event that starts no session is stored on its own: refused the same way.
    const quiet = await hook.app.request(path("quiet"), { method: "POST", body: "{}" });
    expect(quiet.status).toBe(503);
    expect(await events()).toBe(before);
    state.fail = false;
    const again = await post();
    expect(again.status).toBe(202);
    const { session_id } = (await again.json()) as Record<string, string>;
    expect((await hook.sessions.whenEnded(session_id!))?.state).toBe("completed");
  });
});
