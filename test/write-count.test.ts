import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Storage } from "unstorage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/ids.ts";
import type { SessionLogEntry, SessionRecord } from "../src/model/records.ts";
import { composeApp } from "../src/platform/compose.ts";
import { createPythonRuntime, type PythonRuntime } from "../src/runtime/python/runtime.ts";
import { createSecretBox } from "../src/secrets.ts";
import { INTERRUPT_BATCH_BYTES } from "../src/sessions/recovery.ts";
import { createStores } from "../src/storage/records.ts";
import { deployBody } from "./support/app.ts";
import { countingStorage } from "./support/counting-storage.ts";
import { fakeRuntime } from "./support/fake-runtime.ts";
import { testPython } from "./support/python.ts";
import { sessionRecord, T } from "./support/records.ts";

/**
 * What one session costs storage, counted at the driver: commits (each a transaction on lmdb)
 * and keys written. docs/storage.md quotes these figures; a change that adds writes fails here.
 */

const MANIFEST = `version: v2
project:
  name: counted
triggers:
  - name: plain
    type: webhook
    call: handlers.py:plain
  - name: durable
    type: webhook
    call: handlers.py:steps
    is_durable: true
`;
const HANDLERS = `
import workflow_sdk

@workflow_sdk.activity
def double(x):
    return x * 2

def plain(event):
    print("hello")

def steps(event):
    print("steps", double(1), double(2))
`;

describe("writes per session", () => {
  let dataHome = "";
  let runtime: PythonRuntime;
  const counting = countingStorage();
  let hook: ReturnType<typeof composeApp>;

  beforeAll(async () => {
    const python = await testPython();
    dataHome = await mkdtemp(join(tmpdir(), "hookline-writes-"));
    runtime = createPythonRuntime({ dataHome, python: async () => python });
    hook = composeApp({
      services: { storage: counting.storage, runtime, secrets: createSecretBox(randomBytes(32)) },
    });
    const res = await hook.app.request(
      "/api/v1/deploy",
      deployBody(MANIFEST, { "handlers.py": HANDLERS }),
    );
    expect(res.status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    hook?.sessions.shutdown();
    await runtime?.dispose();
    await hook?.dispose();
    if (dataHome) await rm(dataHome, { recursive: true, force: true });
  });

  async function countSession(trigger: string) {
    const { triggers } = (await (
      await hook.app.request(`/api/v1/triggers?project=counted`)
    ).json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    const path = triggers.find((t) => t.name === trigger)!.webhook_path;
    // The session counted before this one was awaited to its stored end: nothing of it is
    // left to write but what the wait below lets settle.
    counting.reset();
    const res = await hook.app.request(path, { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    for (;;) {
      const r = await hook.app.request(`/api/v1/sessions/${session_id}`);
      const { session } = (await r.json()) as { session: SessionRecord };
      if (["completed", "error", "stopped"].includes(session.state)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await hook.sessions.whenEnded(session_id); // its end, and the writes before it, stored
    await new Promise((r) => setTimeout(r, 300)); // the write-behind settles
    return { ...counting.counts, byNamespace: { ...counting.counts.byNamespace } };
  }

  it("commits a deploy in one write, a redeploy too", async () => {
    counting.reset();
    const body = deployBody(MANIFEST.replace("name: counted", "name: counted2"), {
      "handlers.py": HANDLERS,
    });
    expect((await hook.app.request("/api/v1/deploy", body)).status).toBe(200);
    expect(counting.counts.commits).toBe(1);
    counting.reset();
    const again = deployBody(MANIFEST.replace("name: counted", "name: counted2"), {
      "handlers.py": `${HANDLERS}\n# changed\n`,
    });
    expect((await hook.app.request("/api/v1/deploy", again)).status).toBe(200);
    expect(counting.counts.commits).toBe(1);
  });

  it("counts a plain session and a durable one", async () => {
    const plain = await countSession("plain");
    const durable = await countSession("durable");
    console.log("writes per plain session:", JSON.stringify(plain));
    console.log("writes per durable session (2 activities):", JSON.stringify(durable));
    // Before the atomic batches (main at d7d1f1a): 9 commits a plain session, 11 a durable one.
    // Now one commit per state change (created, running, ended; the first two may merge), one
    // per journal step that comes with no state change, and the event. (The web UI's paging
    // index, one more commit a session, is folded into the session index.)
    expect(plain.commits).toBeLessThanOrEqual(5);
    expect(durable.commits).toBeLessThanOrEqual(7);
    expect(plain.byNamespace.events).toBe(1);
    expect(durable.byNamespace.journals).toBe(2);
  }, 60_000);
});

describe("writes per recovery", () => {
  // Past one batch (INTERRUPT_BATCH, 500): three commits, the last one partial.
  const COUNT = 1_200;

  /** A restart over `storage`: the next service finds what is stored, and nobody runs it. */
  const restart = (storage: Storage) =>
    composeApp({
      services: {
        storage,
        runtime: fakeRuntime({}).runtime,
        secrets: createSecretBox(randomBytes(32)),
      },
    });

  it("interrupts every session left running, 500 to a commit", async () => {
    const counting = countingStorage();
    const seeded = createStores(counting.storage);
    const ids = Array.from({ length: COUNT }, () => newId("ses"));
    for (const [i, id] of ids.entries()) {
      const state = i % 3 ? "running" : "created";
      await seeded.sessions.put(sessionRecord({ id, project_id: "prj_1", state }), null);
    }
    const hook = restart(counting.storage);
    try {
      counting.reset();
      expect(await hook.sessions.recover()).toEqual({ resumed: 0, started: 0, interrupted: COUNT });
      expect(counting.counts.commits).toBe(Math.ceil(COUNT / 500));
      expect(counting.counts.byNamespace.sessions).toBe(COUNT);
      for (const id of ids) {
        const record = await hook.stores.sessions.get(id);
        expect(record).toMatchObject({ state: "error", error: { message: "interrupted" } });
        const log = await hook.stores.logs.get(id);
        expect(log.at(-1)).toMatchObject({ kind: "state", state: "error", detail: "interrupted" });
      }
      expect(await hook.stores.sessionIndex.count("prj_1", "error")).toBe(COUNT);
      expect(await hook.stores.sessionIndex.count("prj_1", "running")).toBe(0);
      expect(await hook.stores.sessionIndex.count("prj_1", "created")).toBe(0);
    } finally {
      hook.sessions.shutdown();
      await hook.dispose();
    }
  }, 60_000);

  it("writes a batch at INTERRUPT_BATCH_BYTES too: a few sessions with large logs, more commits", async () => {
    const counting = countingStorage();
    const seeded = createStores(counting.storage);
    // Each session 0.4 of the budget: two fit in a commit, a third would not.
    const print = { t: T, kind: "print", text: "x".repeat(64 * 1024), stream: "stdout" } as const;
    const prints = Math.floor((0.4 * INTERRUPT_BATCH_BYTES) / print.text.length);
    const ids = Array.from({ length: 6 }, () => newId("ses"));
    for (const id of ids) {
      const record = sessionRecord({ id, project_id: "prj_1", state: "running" });
      const log: SessionLogEntry[] = Array.from({ length: prints }, () => print);
      await seeded.sessions.put(record, null);
      await seeded.logs.put(id, log);
      // Measured as recovery does: the record and the log as storage stores them (JSON, UTF-8).
      const bytes =
        Buffer.byteLength(JSON.stringify(record)) + Buffer.byteLength(JSON.stringify(log));
      expect([2 * bytes <= INTERRUPT_BATCH_BYTES, 3 * bytes > INTERRUPT_BATCH_BYTES]).toEqual([
        true,
        true,
      ]);
    }
    const hook = restart(counting.storage);
    try {
      counting.reset();
      expect(await hook.sessions.recover()).toEqual({
        resumed: 0,
        started: 0,
        interrupted: ids.length,
      });
      // Far fewer than INTERRUPT_BATCH sessions, yet two to a commit.
      expect(counting.counts.commits).toBe(3);
      expect(counting.counts.byNamespace).toMatchObject({ sessions: 6, logs: 6 });
      for (const id of ids) {
        const log = await hook.stores.logs.get(id);
        expect(log).toHaveLength(prints + 1);
        expect(log.at(-1)).toMatchObject({ kind: "state", state: "error", detail: "interrupted" });
      }
      expect(await hook.stores.sessionIndex.count("prj_1", "error")).toBe(ids.length);
    } finally {
      hook.sessions.shutdown();
      await hook.dispose();
    }
  }, 60_000);
});
