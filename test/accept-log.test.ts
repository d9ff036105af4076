import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { FORMAT_VERSION } from "../src/storage/format.ts";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

/**
 * The accept log (docs/storage.md): under the default store (lmdb, sync=normal) a webhook's
 * answer waits for one file write, not for its LMDB commit. Another process holds LMDB's write
 * lock, so no commit of the service can land: the webhook is answered 202 all the same; the
 * service is then SIGKILLed before its commit ever landed, and started again it has the event
 * and runs the session (replayed from the log). Under sync=full, which promises a flush before
 * a write returns, the same webhook gets no answer while the lock is held.
 */

const MANIFEST = (mark: string) => `version: v2
project:
  name: held
vars:
  - name: MARK
    value: "${mark}"
triggers:
  - name: hit
    type: webhook
    call: handlers.py:hit
  - name: ask
    type: webhook
    call: handlers.py:ask
    is_sync: true
`;
// Besides its print, the session leaves a mark outside the store: it shows when the session ran.
const HANDLERS = `import os

import workflow_sdk


def hit(event):
    print("ran", event.data.body.text)
    with open(os.environ["MARK"], "a") as f:
        f.write(event.data.body.text)


def ask(event):
    print("asked", event.data.body.text)
    workflow_sdk.http_outcome(status_code=200, json={"got": event.data.body.json})
`;

/** A process holding the LMDB environment's write lock (it writes `release`.held) until `release` exists. */
const HOLD = `
const { existsSync, writeFileSync } = require("node:fs");
const { open } = require("lmdb");
const [path, release] = process.argv.slice(1);
const db = open({ path, encoding: "string" });
db.transactionSync(() => {
  writeFileSync(release + ".held", "");
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(release)) Atomics.wait(nap, 0, 0, 20);
});
process.exit(0);
`;

describe("the accept log: a webhook answered before its commit lands", () => {
  const root = mkdtempSync(join(tmpdir(), "hookline-accept-log-"));
  // Each test has a data home of its own.
  let home = "";
  let project = "";
  let db = "";
  let release = "";
  let n = 0;
  beforeEach(() => {
    home = join(root, String(++n));
    project = join(home, "project");
    db = join(home, "data", "hookline", "db");
    release = join(home, "release");
    mkdirSync(home);
  });
  let service: ResultPromise | null = null;
  let holder: ResultPromise | null = null;
  const kill = (p: ResultPromise | null) => {
    try {
      if (p?.pid) process.kill(-p.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  afterEach(async () => {
    kill(service);
    await service?.catch(() => {});
    writeFileSync(release, "");
    await holder?.catch(() => {});
    service = holder = null;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function start(port: number, storage?: string): Promise<string> {
    const env: Record<string, string> = {
      XDG_DATA_HOME: join(home, "data"),
      XDG_CONFIG_HOME: join(home, "config"),
      SVC_WORKER_PYTHON: await testPython(),
      ...(storage ? { SVC_STORAGE: storage } : {}),
    };
    const args = [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "dev", "--port", String(port)];
    service = execa("node", args, {
      env,
      extendEnv: true,
      detached: true,
      reject: false,
      stdout: { file: join(home, "out.log") },
      stderr: { file: join(home, "err.log") },
    });
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 30_000);
    return url;
  }

  /** Deploys the project; the webhook URL of `trigger` (`hit` by default). */
  async function deploy(url: string, trigger = "hit"): Promise<string> {
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "manifest.yaml"), MANIFEST(join(home, "mark")));
    writeFileSync(join(project, "handlers.py"), HANDLERS);
    expect((await deployFolder(url, project)).status).toBe(200);
    const res = await fetch(`${url}/api/v1/triggers?project=held`);
    type Trigger = { name: string; webhook_path: string };
    const { triggers } = (await res.json()) as { triggers: Trigger[] };
    return url + triggers.find((t) => t.name === trigger)!.webhook_path;
  }

  /** Another process takes the store's write lock (it says so once it has it). */
  async function holdWriteLock(): Promise<void> {
    holder = execa("node", ["-e", HOLD, db, release], { cwd: repoRoot, reject: false });
    await until("the write lock held", () => existsSync(`${release}.held`), 30_000);
  }

  /** A service started and deployed, the store's write lock taken, then a webhook posted. */
  async function postWhileLocked(body: string) {
    const port = await freePort();
    const url = await start(port);
    const hook = await deploy(url);
    await holdWriteLock();
    return { port, url, res: await fetch(hook, { method: "POST", body }) };
  }

  it("answers 202 while no commit can land; killed then, the next start has the event and runs it", async () => {
    const posted = await postWhileLocked('{"n":7}');
    const { port, res } = posted;
    let { url } = posted;
    expect(res.status).toBe(202);
    const { event_id, session_id } = (await res.json()) as Record<string, string>;
    const logs = readdirSync(join(db, "accepts")).filter((n) => n.endsWith(".log"));
    expect(logs).toHaveLength(1); // the batch is there, its commit still waiting for the lock
    kill(service);
    await service;
    writeFileSync(release, ""); // the lock let go only once the service is gone
    await holder;

    url = await start(port);
    expect((await fetch(`${url}/api/v1/events/${event_id}`)).status).toBe(200);
    const ended = await until("the replayed session's end", async () => {
      const r = await fetch(`${url}/api/v1/sessions/${session_id}`);
      if (r.status !== 200) return null;
      const { session } = (await r.json()) as { session: { state: string; error?: unknown } };
      return ["completed", "error", "stopped"].includes(session.state) && session;
    });
    expect([ended.state, ended.error]).toEqual(["completed", null]);
    const printed = await fetch(`${url}/api/v1/sessions/${session_id}/prints`);
    const { prints } = (await printed.json()) as { prints: { text: string }[] };
    expect(prints.map((p) => p.text)).toEqual([`ran {"n":7}`]);
    expect(readdirSync(join(db, "accepts"))).toEqual([]); // replayed, then removed
  }, 120_000);

  it("answers a sync webhook while no commit can land; once one can, its session is stored completed, not created", async () => {
    const port = await freePort();
    const url = await start(port);
    const hook = await deploy(url, "ask");
    await holdWriteLock();
    // Its request waits for its outcome, not for LMDB: the session runs from the logged batch.
    const res = await fetch(hook, { method: "POST", body: '{"n":3}' });
    expect([res.status, await res.json()]).toEqual([200, { got: { n: 3 } }]);
    const logs = readdirSync(join(db, "accepts")).filter((n) => n.endsWith(".log"));
    expect(logs).toHaveLength(1); // its `created` still waits for the lock, and so does its end
    writeFileSync(release, "");
    await holder;
    // The end waited for `created` to land: it is not overwritten by it.
    const list = await until("the session's end in storage", async () => {
      const r = await fetch(`${url}/api/v1/sessions?project=held`);
      const { sessions } = (await r.json()) as { sessions: { id: string; state: string }[] };
      return sessions.length === 1 && sessions[0]!.state !== "created" && sessions;
    });
    const id = list[0]!.id;
    await new Promise((r) => setTimeout(r, 300)); // any later write would have landed
    const r = await fetch(`${url}/api/v1/sessions/${id}`);
    const { session } = (await r.json()) as { session: { state: string } };
    expect(session.state).toBe("completed");
    const printed = await fetch(`${url}/api/v1/sessions/${id}/prints`);
    const { prints } = (await printed.json()) as { prints: { text: string }[] };
    expect(prints.map((p) => p.text)).toEqual([`asked {"n":3}`]);
  }, 120_000);

  it("a backup taken while the commit waits has the webhook; restored, its session runs", async () => {
    const { port, res } = await postWhileLocked('{"n":5}');
    expect(res.status).toBe(202);
    const { event_id, session_id } = (await res.json()) as Record<string, string>;
    // The service runs, its batch only in the log: the backup adds it to its copy.
    const file = join(home, "backup.mdb");
    const backup = await execa("node", [join(repoRoot, "bin/cli.mjs"), "backup", file], {
      env: { XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") },
      reject: false,
    });
    expect([backup.exitCode, backup.stderr]).toEqual([0, ""]);
    expect(backup.stdout).toBe(
      `backup: ${file} (storage format ${FORMAT_VERSION}; 1 accepted webhook from the accept log)`,
    );
    const logs = readdirSync(join(db, "accepts")).filter((n) => n.endsWith(".log"));
    expect(logs).toHaveLength(1); // the running service's log is left to it
    kill(service);
    await service;
    writeFileSync(release, "");
    await holder;

    // Restored into a new data home, whose start has no log to replay: the copy has it all.
    const keyFile = join(home, "config", "hookline", "secret.key");
    home = join(home, "restored");
    mkdirSync(home);
    const restore = () =>
      execa("node", [join(repoRoot, "bin/cli.mjs"), "restore", file], {
        env: { XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") },
        reject: false,
      });
    // No secret key here yet: the store's key check would refuse the start, so restore does.
    const keyless = await restore();
    expect([keyless.exitCode, keyless.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^error: restore: the backup was written with a secret key and none is set here/,
      ),
    ]);
    expect(readdirSync(home)).toEqual([]);
    mkdirSync(join(home, "config", "hookline"), { recursive: true });
    copyFileSync(keyFile, join(home, "config", "hookline", "secret.key"));
    const restored = await restore();
    expect([restored.exitCode, restored.stderr]).toEqual([0, ""]);
    const url = await start(port);
    expect((await fetch(`${url}/api/v1/events/${event_id}`)).status).toBe(200);
    const printed = await until("the restored session's print", async () => {
      const r = await fetch(`${url}/api/v1/sessions/${session_id}/prints`);
      if (r.status !== 200) return null;
      const { prints } = (await r.json()) as { prints: { text: string }[] };
      return prints.length > 0 && prints.map((p) => p.text);
    });
    expect(printed).toEqual([`ran {"n":5}`]);
  }, 120_000);

  it("a read passed on after the answer waits for the commit: the session is found, then runs", async () => {
    const { url, res } = await postWhileLocked('{"n":9}');
    const answer = await res.text(); // named in a failure, as the read's below
    expect([res.status, answer]).toEqual([202, expect.stringContaining("session_id")]);
    const { session_id } = JSON.parse(answer) as Record<string, string>;
    const read = fetch(`${url}/api/v1/sessions/${session_id}`);
    // Meanwhile the read reaches the front, and the session is not run: it is not stored yet.
    await new Promise((r) => setTimeout(r, 1000));
    expect(existsSync(join(home, "mark"))).toBe(false);
    writeFileSync(release, "");
    const found = await read;
    expect([found.status, await found.text()]).toEqual([200, expect.stringContaining(session_id!)]);
    const printed = await until("the session's print", async () => {
      const r = await fetch(`${url}/api/v1/sessions/${session_id}/prints`);
      const { prints } = (await r.json()) as { prints: { text: string }[] };
      return prints.length > 0 && prints.map((p) => p.text);
    });
    expect(printed).toEqual([`ran {"n":9}`]);
    expect(readFileSync(join(home, "mark"), "utf8")).toBe('{"n":9}');
  }, 120_000);

  it("under sync=full (a flush before any write returns) the answer waits for the lock", async () => {
    const port = await freePort();
    const url = await start(port, `lmdb:${db}?sync=full`);
    const hook = await deploy(url);
    await holdWriteLock();
    const answered = fetch(hook, { method: "POST", body: '{"n":8}' }).then((r) => r.status);
    const early = await Promise.race([answered, new Promise((r) => setTimeout(r, 1500, "none"))]);
    expect(early).toBe("none");
    writeFileSync(release, "");
    expect(await answered).toBe(202);
    expect(existsSync(join(db, "accepts"))).toBe(false); // no accept log under sync=full
  }, 120_000);
});
