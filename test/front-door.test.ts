// The front door (src/front/): with the default store, webhooks are taken on a thread of their
// own, so that an accept never waits for the event loop the sessions' work runs on. The service
// runs in this process here (from its TypeScript sources: the front thread loads them through
// tsx), so a test can hold the session host's loop on purpose and watch who answers meanwhile.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSettings, type Settings } from "../src/config.ts";
import { FRONT_THREAD_NAME, HOST_NICE_STEPS } from "../src/front/priority.ts";
import { type Service, startService } from "../src/platform/node.ts";
import { deployFolder } from "./support/process.ts";
import { testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

const root = mkdtempSync(join(tmpdir(), "hookline-front-door-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const MANIFEST = (version: string) => `version: v2
project:
  name: door
vars:
  - name: RELEASE
    value: "${version}"
triggers:
  - name: accept
    type: webhook
    event_type: post
    call: handlers.py:on_accept
  - name: answer
    type: webhook
    event_type: post
    call: handlers.py:on_answer
    is_sync: true
  - name: hold
    type: webhook
    event_type: post
    call: handlers.py:on_hold
    is_sync: true
`;

// The release is in the code too: a session started with an older deployment prints its own.
const HANDLERS = (version: string) => `import os
import sys
import time

import workflow_sdk


def on_accept(event: workflow_sdk.Event):
    print(f"build ${version}, release {os.environ['RELEASE']}: {event.data.body.text}")


def on_hold(event: workflow_sdk.Event):
    # Answers once the file the body names exists: the test decides how long it is held.
    while not os.path.exists(event.data.body.text):
        time.sleep(0.01)
    workflow_sdk.http_outcome(status_code=200, body="released")


def on_answer(event: workflow_sdk.Event):
    nice = os.nice(0) if sys.platform == "linux" else "?"
    workflow_sdk.http_outcome(status_code=201, body=f"answered {event.data.body.text} at nice {nice}")
`;

let python: string;
beforeAll(async () => {
  python = await testPython();
}, 180_000);

/** A service of this process on its own data home, the project deployed at `version`. */
async function start(name: string, frontThread: boolean, more: Partial<Settings> = {}) {
  const home = join(root, name);
  const settings = resolveSettings(
    {
      mode: "dev",
      port: 0,
      dataHome: home,
      configHome: join(home, "config"),
      frontThread,
      ...more,
    },
    {},
  );
  const svc = await startService(settings, { log: () => {}, python: async () => python });
  const deploy = async (version: string) => {
    const dir = join(home, `project-${version}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "manifest.yaml"), MANIFEST(version));
    writeFileSync(join(dir, "handlers.py"), HANDLERS(version));
    const res = await deployFolder(svc.url, dir);
    expect(res.status).toBe(200);
  };
  await deploy("1");
  const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
    svc,
    "/api/v1/triggers?project=door",
  );
  const hook = (n: string) => `${svc.url}${triggers.find((t) => t.name === n)!.webhook_path}`;
  return { svc, deploy, accept: hook("accept"), answer: hook("answer"), hold: hook("hold") };
}

async function api<T>(svc: Service, path: string): Promise<T> {
  const res = await fetch(`${svc.url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

/**
 * POSTs to `url` from another process (curl) while this thread, the session host's, is held for
 * `holdMs`: the status, and whether the answer came before the hold ended (curl prints the
 * clock when it has it).
 */
async function whileHeld(url: string, holdMs: number) {
  const curl = spawn("sh", [
    "-c",
    `curl -s -o /dev/null -w "%{http_code}" -X POST -d held "${url}"; echo " $(date +%s%3N)"`,
  ]);
  let out = "";
  curl.stdout.on("data", (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise<void>((r) => curl.once("exit", () => r()));
  const end = Date.now() + holdMs;
  while (Date.now() < end) {
    // Held: nothing else runs on this thread (its event loop waits).
  }
  const heldUntil = Date.now();
  await exited;
  const [status, at] = out.trim().split(" ");
  return { status: Number(status), beforeTheHoldEnded: Number(at) < heldUntil };
}

async function printsOf(svc: Service, sessionId: string): Promise<string[]> {
  const body = await api<{ prints: { text: string }[] }>(
    svc,
    `/api/v1/sessions/${sessionId}/prints`,
  );
  return body.prints.map((p) => p.text);
}

describe("the front door", () => {
  let door: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    door = await start("front", true);
  }, 120_000);
  afterAll(() => door?.svc.close());

  it("answers a webhook 202 while the session host's event loop is held, and the session runs after", async () => {
    const seen = await whileHeld(door.accept, 3000);
    expect(seen).toEqual({ status: 202, beforeTheHoldEnded: true });
    await until("the held webhook's session to complete", async () => {
      const { sessions } = await api<{ sessions: { id: string; state: string }[] }>(
        door.svc,
        "/api/v1/sessions?project=door",
      );
      const done = sessions.find((s) => s.state === "completed");
      return done && (await printsOf(door.svc, done.id)).includes("build 1, release 1: held");
    });
  }, 60_000);

  it.runIf(process.platform === "linux")(
    "runs on a thread the OS shows by name (top -H, ps -L), the host's thread and its sessions below it",
    () => {
      const threads = readdirSync("/proc/self/task").flatMap((tid) => {
        try {
          const comm = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
          // proc(5): nice is field 19, the 17th after the command's closing parenthesis.
          const nice = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
          return [{ comm, nice }];
        } catch {
          return []; // a thread that ended meanwhile
        }
      });
      const front = threads.find((t) => t.comm === FRONT_THREAD_NAME);
      expect(front, `a thread named ${FRONT_THREAD_NAME}`).toBeDefined();
      // This thread started the service: it is the session host's.
      expect(getPriority(0)).toBe(Math.min(19, front!.nice + HOST_NICE_STEPS));
    },
  );

  it("answers a sync webhook with its session's outcome, which the host sends back", async () => {
    const res = await fetch(door.answer, { method: "POST", body: "now" });
    expect(res.status).toBe(201);
    // The session's process: SVC_SESSION_PRIORITY's `low`, nice 5 at least: where the host that
    // started it already runs (5 below the front), not 5 below that.
    const nice = process.platform === "linux" ? Math.max(getPriority(0), 5) : "?";
    expect(await res.text()).toBe(`answered now at nice ${nice}`);
  }, 60_000);

  it("runs the next webhook after a deploy with the new deployment", async () => {
    // Known to the front first: where the webhook led before the deploy.
    expect((await fetch(door.accept, { method: "POST", body: "before" })).status).toBe(202);
    await door.deploy("2");
    const res = await fetch(door.accept, { method: "POST", body: "after" });
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    await until(
      "the session after the deploy to print",
      async () => (await printsOf(door.svc, session_id)).includes("build 2, release 2: after"),
      30_000,
    );
  }, 60_000);

  it("passes a webhook path it cannot read on to the host, and goes on taking webhooks", async () => {
    const res = await fetch(`${door.svc.url}/webhooks/%E0%A4%A`, { method: "POST", body: "x" });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect((await fetch(door.accept, { method: "POST", body: "still" })).status).toBe(202);
  }, 60_000);

  it("counts the webhooks it answered in /metrics, with the host's", async () => {
    const count = async () => {
      const text = await (await fetch(`${door.svc.url}/metrics`)).text();
      const line = text
        .split("\n")
        .find((l) => l.startsWith('hookline_webhook_responses_total{status="202"}'));
      return Number(line?.split(" ")[1] ?? 0);
    };
    const before = await count();
    for (let i = 0; i < 3; i++) {
      expect((await fetch(door.accept, { method: "POST", body: `m${i}` })).status).toBe(202);
    }
    expect(await count()).toBe(before + 3);
  }, 60_000);
});

/**
 * A request the front is taking: a webhook POST whose body is announced (4 bytes) and half sent;
 * `socket.write("ow")` ends it. `answer()`: what came back so far.
 */
async function halfSent(webhook: string) {
  const url = new URL(webhook);
  const socket = connect(Number(url.port), url.hostname);
  let answer = "";
  socket.on("data", (b: Buffer) => {
    answer += b.toString();
  });
  await new Promise<void>((r) => socket.once("connect", () => r()));
  socket.write(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: 4\r\n\r\nsl`);
  return { socket, answer: () => answer };
}

describe("sessions wait out the front door's burst (SVC_BURST_YIELD)", () => {
  let door: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    // A minute: nothing but the front's requests decides here when the session starts.
    door = await start("burst", true, { burstYieldMs: 60_000 });
  }, 120_000);
  afterAll(() => door?.svc.close());

  const stateOf = async (id: string) =>
    (await api<{ session: { state: string } }>(door.svc, `/api/v1/sessions/${id}`)).session.state;

  it("an async session waits while the front holds a request, a sync one does not; both run once it has answered", async () => {
    const slow = await halfSent(door.accept);
    try {
      const res = await fetch(door.accept, { method: "POST", body: "waits" });
      expect(res.status).toBe(202);
      const { session_id } = (await res.json()) as { session_id: string };
      // A sync session runs meanwhile: the request held for it does not wait for the burst.
      const sync = await fetch(door.answer, { method: "POST", body: "meanwhile" });
      expect(sync.status).toBe(201);
      expect(await stateOf(session_id)).toBe("created");
      expect(await printsOf(door.svc, session_id)).toEqual([]);
      slow.socket.write("ow");
      await until("the slow request's answer", () => slow.answer().startsWith("HTTP/1.1 202"));
      await until(
        "the waiting session to run once the front has answered",
        async () => (await printsOf(door.svc, session_id)).includes("build 1, release 1: waits"),
        30_000,
      );
      // Its print is stored before its end: the end follows.
      await until(
        "the waiting session's end",
        async () => (await stateOf(session_id)) === "completed",
      );
    } finally {
      slow.socket.destroy();
    }
  }, 60_000);

  it("a held sync request waiting for its outcome is not a burst: async sessions run meanwhile", async () => {
    const release = join(root, "release-hold");
    let answered = false;
    const held = fetch(door.hold, { method: "POST", body: release }).then(async (r) => {
      answered = true;
      return { status: r.status, text: await r.text() };
    });
    try {
      await until("the held request's session to run", async () => {
        const { sessions } = await api<{ sessions: { trigger_name: string; state: string }[] }>(
          door.svc,
          "/api/v1/sessions?project=door",
        );
        return sessions.some((s) => s.trigger_name === "hold" && s.state === "running");
      });
      const res = await fetch(door.accept, { method: "POST", body: "beside" });
      const { session_id } = (await res.json()) as { session_id: string };
      await until(
        "the async session to run while the sync one is held",
        async () => (await printsOf(door.svc, session_id)).includes("build 1, release 1: beside"),
        30_000,
      );
      expect(answered).toBe(false);
    } finally {
      writeFileSync(release, "");
    }
    expect(await held).toEqual({ status: 200, text: "released" });
  }, 60_000);

  it("a waiting session can be stopped", async () => {
    const slow = await halfSent(door.accept);
    try {
      const res = await fetch(door.accept, { method: "POST", body: "stopped" });
      const { session_id } = (await res.json()) as { session_id: string };
      // Time enough to have run, had it not waited: a sync session's whole round trip.
      expect((await fetch(door.answer, { method: "POST", body: "meanwhile" })).status).toBe(201);
      expect(await stateOf(session_id)).toBe("created");
      const stop = await fetch(`${door.svc.url}/api/v1/sessions/${session_id}/stop`, {
        method: "POST",
      });
      expect(stop.status).toBe(200);
      // Stopped while it still waited: the front is held yet (the slow request has no answer).
      expect(slow.answer()).toBe("");
      expect(await stateOf(session_id)).toBe("stopped");
      expect(await printsOf(door.svc, session_id)).toEqual([]);
    } finally {
      slow.socket.destroy();
    }
  }, 60_000);
});

describe("a stop while sessions wait out a burst (SVC_BURST_YIELD)", () => {
  it("runs them within the drain, though the front is still held", async () => {
    const door = await start("burst-stop", true, { burstYieldMs: 60_000, drainMs: 3000 });
    const slow = await halfSent(door.accept);
    try {
      const res = await fetch(door.accept, { method: "POST", body: "drained" });
      const { session_id } = (await res.json()) as { session_id: string };
      // Handed over to the host (alive there) and waiting, before the stop.
      await until("the session handed over", async () => {
        const ready = (await (await fetch(`${door.svc.url}/readyz`)).json()) as {
          sessions: number;
        };
        return ready.sessions === 1;
      });
      const ended = door.svc.sessions.whenEnded(session_id);
      await door.svc.stop();
      const record = await Promise.race([ended, sleep(5000).then(() => null)]);
      expect(record?.state).toBe("completed");
      expect(slow.answer()).toBe(""); // the front was held all along
    } finally {
      slow.socket.destroy();
      await door.svc.close();
    }
  }, 120_000);
});

describe("without the front door (SVC_FRONT_THREAD=off)", () => {
  it("answers the same webhook only once the session host's loop is free", async () => {
    const plain = await start("plain", false);
    try {
      const seen = await whileHeld(plain.accept, 3000);
      expect(seen).toEqual({ status: 202, beforeTheHoldEnded: false });
    } finally {
      await plain.svc.close();
    }
  }, 120_000);
});
