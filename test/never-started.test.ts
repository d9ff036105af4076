// A session accepted but not started when its instance dies (kill -9) runs once, elsewhere or at
// the next start: an accepted event never goes without its run. Only a session that had started
// ends "interrupted" (non-durable), and a synchronous one whose request died with the instance
// ends in error without running. Real service processes, real Python, and for the cluster real
// PostgreSQL, Redis the bus.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Fleet } from "./support/fleet.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoFleet } from "./support/postgres.ts";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { redisTestUrl } from "./support/redis.ts";
import { until } from "./support/until.ts";

const TOKEN = "backlog-token";
const auth = { authorization: `Bearer ${TOKEN}` };
const NEVER_STARTED = "never started: the instance holding its request stopped before it did";

const manifest = (workdir: string) => `version: v2
project:
  name: backlog
vars:
  - name: WORKDIR
    value: ${workdir}
triggers:
  - name: slow
    type: webhook
    call: handlers.py:slow
  - name: keep
    type: webhook
    call: handlers.py:keep
    is_durable: true
  - name: ask
    type: webhook
    call: handlers.py:ask
    is_sync: true
  - name: parent
    type: webhook
    call: handlers.py:parent
`;

// Each run leaves a line "<session id> <what> <pid>" in WORKDIR/runs.txt: a session that ran
// twice has two lines.
const HANDLERS = `import os
import time

import workflow_sdk


def mark(session_id, what):
    with open(os.path.join(os.environ["WORKDIR"], "runs.txt"), "a") as f:
        f.write(f"{session_id} {what} {os.getpid()}\\n")


def slow(event):
    mark(event.session_id, "slow")
    time.sleep(float(event.data.body.text or "0"))


def keep(event):
    mark(event.session_id, "keep")


def ask(event):
    mark(event.session_id, "ask")
    workflow_sdk.http_outcome(200, "ok")


def child(event):
    mark(event.session_id, "child")


def parent(event):
    for n in range(3):
        workflow_sdk.start("handlers.py:child", {"n": n})
    mark(event.session_id, "parent")
    time.sleep(120)
`;

interface Session {
  id: string;
  state: string;
  trigger_name: string;
  started_at: string | null;
  error?: { message: string };
}

function project(home: string): { dir: string; workdir: string } {
  const dir = join(home, "project");
  const workdir = join(home, "work");
  mkdirSync(dir);
  mkdirSync(workdir);
  writeFileSync(join(dir, "manifest.yaml"), manifest(workdir));
  writeFileSync(join(dir, "handlers.py"), HANDLERS);
  writeFileSync(join(workdir, "runs.txt"), "");
  return { dir, workdir };
}

/** The runs each session made: session id → lines. */
function runs(workdir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of readFileSync(join(workdir, "runs.txt"), "utf8").split("\n")) {
    if (!line) continue;
    const id = line.split(" ")[0]!;
    out.set(id, [...(out.get(id) ?? []), line]);
  }
  return out;
}

/** The last listing that failed: its status and answer (a failing test says it). */
let listFailed = "";

async function sessions(url: string, query = ""): Promise<Session[]> {
  const res = await fetch(`${url}/api/v1/sessions?project=backlog&limit=1000${query}`, {
    headers: auth,
  }).catch((e: Error) => e);
  if (res instanceof Error || !res.ok) {
    const answer = res instanceof Error ? res.message : `${res.status} ${await res.text()}`;
    listFailed = `${new Date().toISOString()} ${answer.slice(0, 200)}`;
    return [];
  }
  return ((await res.json()) as { sessions: Session[] }).sessions;
}

/** The pids from `pid` up to the init process. */
function ancestors(pid: number): number[] {
  const chain: number[] = [];
  for (let p = pid; p > 1; ) {
    chain.push(p);
    const stat = readFileSync(`/proc/${p}/stat`, "utf8");
    p = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  }
  return chain;
}

/** One service process (`cli up --mode prod`, one Python slot) on a data home, restartable. */
function oneService(home: string) {
  let service: ResultPromise | null = null;
  let url = "";
  let hooks: Record<string, string> = {};
  const env = async () => ({
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    SVC_WORKER_PYTHON: await testPython(),
    SVC_API_TOKEN: TOKEN,
    SVC_MAX_SESSIONS: "1",
    SVC_DRAIN: "1",
  });
  const self = {
    get url() {
      return url;
    },
    async start(port: number): Promise<void> {
      service = execa(
        "node",
        [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "prod", "--port", String(port)],
        // Its own process group, so one kill reaches every child; it exits by itself on SIGTERM.
        { env: await env(), extendEnv: true, detached: true, reject: false },
      );
      url = `http://127.0.0.1:${port}`;
      await waitHealthy(url, 30_000);
    },
    async deploy(dir: string): Promise<void> {
      expect((await deployFolder(url, dir, auth)).status).toBe(200);
      const list = await fetch(`${url}/api/v1/triggers?project=backlog`, { headers: auth });
      const { triggers } = (await list.json()) as {
        triggers: { name: string; webhook_path: string }[];
      };
      hooks = Object.fromEntries(triggers.map((t) => [t.name, t.webhook_path]));
    },
    async post(name: string, body = ""): Promise<string> {
      const res = await fetch(url + hooks[name], { method: "POST", body });
      expect(res.status, `POST ${name}`).toBe(202);
      return ((await res.json()) as { session_id: string }).session_id;
    },
    hold(name: string): void {
      void fetch(url + hooks[name], { method: "POST" }).catch(() => {});
    },
    async stop(signal: "SIGKILL" | "SIGTERM"): Promise<void> {
      if (signal === "SIGKILL") process.kill(-service!.pid!, "SIGKILL");
      else service!.kill("SIGTERM");
      await service;
    },
    async dispose(): Promise<void> {
      try {
        if (service?.pid) process.kill(-service.pid, "SIGKILL");
      } catch {
        // already gone
      }
      await service?.catch(() => {});
    },
  };
  return self;
}

describe.each([
  { how: "killed (kill -9)", signal: "SIGKILL" as const },
  { how: "stopped (SIGTERM)", signal: "SIGTERM" as const },
])("one instance $how with sessions waiting for a process, then started again", ({ signal }) => {
  const home = mkdtempSync(join(tmpdir(), "hookline-never-started-"));
  const svc = oneService(home);
  afterAll(async () => {
    await svc.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  it("runs each one that never started once; ends the one that ran, and the held one unrun", async () => {
    const { dir, workdir } = project(home);
    const port = await freePort();
    await svc.start(port);
    await svc.deploy(dir);

    // The one slot is taken by a long session; behind it wait three plain ones, a durable one,
    // and a synchronous request held open.
    const busy = await svc.post("slow", "60");
    await until("the long session to run", () => runs(workdir).has(busy) || undefined);
    const waiting = [await svc.post("slow"), await svc.post("slow"), await svc.post("slow")];
    const durable = await svc.post("keep");
    svc.hold("ask");
    const held = await until("five sessions waiting for the slot", async () => {
      const created = await sessions(svc.url, "&state=created");
      return created.length === 5 && created.find((s) => s.trigger_name === "ask");
    });

    await svc.stop(signal);
    await svc.start(port);

    const ended = await until("every session to end", async () => {
      const all = await sessions(svc.url);
      const open = all.some((s) => s.state === "created" || s.state === "running");
      return all.length === 6 && !open ? all : undefined;
    });
    const byId = new Map(ended.map((s) => [s.id, s]));
    const ran = runs(workdir);
    // Never started: each ran exactly once, to its end.
    for (const id of [...waiting, durable]) {
      expect(byId.get(id), `${id} never started: it runs after the restart`).toMatchObject({
        state: "completed",
      });
      expect(ran.get(id), `${id} runs once`).toHaveLength(1);
    }
    // Started, not durable: interrupted (the contract), and not run again.
    expect(byId.get(busy)).toMatchObject({ state: "error" });
    expect(byId.get(busy)!.error!.message).toMatch(/^interrupted/);
    expect(ran.get(busy)).toHaveLength(1);
    // The held request went with the instance: its session never runs.
    expect(byId.get(held.id)).toMatchObject({
      state: "error",
      started_at: null,
      error: { message: NEVER_STARTED },
    });
    expect(ran.has(held.id), "the held request's session never ran").toBe(false);
  }, 120_000);
});

const clusters = [
  {
    name: "PostgreSQL (Redis the bus)",
    enabled: warnIfNoFleet("the never-started cluster test"),
    env: () => ({ SVC_STORAGE: postgresTestUrl(), SVC_REDIS_URL: redisTestUrl() }),
  },
];
afterAll(dropPostgresTestTables);

describe.each(clusters)(
  "three instances on $name, the one holding unstarted sessions killed",
  (c) => {
    const home = mkdtempSync(join(tmpdir(), "hookline-never-started-fleet-"));
    let fleet: Fleet;
    let hooks: Record<string, string> = {};
    let workdir = "";

    beforeAll(async () => {
      if (!c.enabled) return;
      const p = project(home);
      workdir = p.workdir;
      fleet = new Fleet({
        ...c.env(),
        SVC_SECRET_KEY: "00".repeat(32),
        SVC_API_TOKEN: TOKEN,
        SVC_WORKER_PYTHON: await testPython(),
        SVC_LEASE: "2",
        SVC_MAX_SESSIONS: "1",
      });
      await fleet.start(3);
      hooks = await fleet.deploy(p.dir, TOKEN);
    }, 240_000);

    afterAll(async () => {
      await fleet?.dispose();
      rmSync(home, { recursive: true, force: true });
    }, 30_000);

    /**
     * A parent on one instance holds its three children and a synchronous request, waiting for
     * its one slot; `stop` takes that instance away. Then every child runs once on the others,
     * the parent ends interrupted, the held request's session never runs.
     */
    async function scenario(
      stop: (victim: number) => Promise<void>,
      resume = (victim: number) => fleet.restart(victim),
    ) {
      const res = await fetch(fleet.url + hooks.parent, { method: "POST" });
      expect(res.status, await res.clone().text()).toBe(202);
      const { session_id: parent } = (await res.json()) as { session_id: string };
      const line = await until("the parent to run", () => runs(workdir).get(parent)?.[0]);
      // The instance running the parent holds its children, waiting behind it for its slot.
      const chain = ancestors(Number(line.split(" ")[2]));
      const victim = fleet.instances.findIndex((i) => chain.includes(i.child!.pid!));
      expect(victim, "the parent's instance").toBeGreaterThanOrEqual(0);
      const children = await until("three children waiting", async () => {
        const created = await sessions(fleet.url, "&state=created");
        return created.length === 3 ? created.map((s) => s.id) : undefined;
      });
      // And a synchronous request held there, behind the parent.
      void fetch(fleet.instances[victim]!.url + hooks.ask, { method: "POST" }).catch(() => {});
      const held = await until("the held request's session", async () => {
        const created = await sessions(fleet.url, "&state=created");
        return created.find((s) => s.trigger_name === "ask");
      });

      await stop(victim);

      const ids = [parent, ...children, held.id];
      let seen = "";
      const ended = await until("every session to end on the others", async () => {
        const all = (await sessions(fleet.url)).filter((s) => ids.includes(s.id));
        seen = all.map((s) => `${s.id} ${s.trigger_name} ${s.state}`).join(", ");
        const open = all.some((s) => s.state === "created" || s.state === "running");
        return all.length === ids.length && !open ? all : undefined;
      }).catch((e: Error) => {
        const ran = [...runs(workdir).keys()];
        throw new Error(
          `${e.message}; last seen: ${seen}; ran: ${ran}; list failed: ${listFailed}`,
        );
      });
      const check = (all: Session[]) => {
        const byId = new Map(all.map((s) => [s.id, s]));
        const ran = runs(workdir);
        for (const id of children) {
          expect(byId.get(id), `child ${id} never started: it runs elsewhere`).toMatchObject({
            state: "completed",
          });
          expect(ran.get(id), `child ${id} runs once`).toHaveLength(1);
        }
        expect(byId.get(parent)!.error?.message).toMatch(/^interrupted/);
        expect(byId.get(held.id)).toMatchObject({
          state: "error",
          error: { message: NEVER_STARTED },
        });
        expect(ran.has(held.id)).toBe(false);
      };
      check(ended);
      await resume(victim);
      // What the victim did when it came back changed nothing of it.
      check((await sessions(fleet.url)).filter((s) => ids.includes(s.id)));
    }

    it.skipIf(!c.enabled)(
      "killed: each child runs once on the others",
      async () => {
        await scenario(async (victim) => fleet.kill(victim));
      },
      120_000,
    );

    it.skipIf(!c.enabled)(
      "stopped (SIGTERM): the same, before its leases run out",
      async () => {
        await scenario((victim) => fleet.terminate(victim));
      },
      120_000,
    );

    it.skipIf(!c.enabled)(
      "stalled past its leases (SIGSTOP), then woken: it runs none of them, and stops the parent",
      async () => {
        await scenario(
          async (victim) => fleet.freeze(victim),
          async (victim) => {
            fleet.wake(victim);
            // Woken, it finds each lease taken and lets the sessions go: its parent's process
            // stopped, its waiting children never started.
            const url = fleet.instances[victim]!.url;
            await until("the woken instance to let its sessions go", async () => {
              const res = await fetch(`${url}/metrics`, { headers: auth }).catch(() => null);
              const live = /^hookline_sessions_live (\d+)/m.exec((await res?.text()) ?? "");
              return live?.[1] === "0" || undefined;
            });
          },
        );
      },
      120_000,
    );
  },
);
