// A trigger's reuse_process: true, through the real service and real Python: the API's trigger
// view shows it, the second session of a trigger runs in the process the first left (module
// state kept, prints its own), a redeploy gets new processes, a durable trigger refuses the
// option at deploy, and the settings bound a process's sessions, its idle time and the idle
// processes kept.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Settings } from "../src/config.ts";
import { alive } from "../src/runtime/python/run-dirs.ts";
import { type EmulatorHandle, useEmulator } from "./support/emulator.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "reuse");

interface Hit {
  n: number;
  pid: number;
}

/** A request to a sync trigger of the fixture, answered once its session has ended. */
function hitter(emu: EmulatorHandle) {
  return async (url: string, body = "x"): Promise<Hit> => {
    const res = await fetch(url, { method: "POST", body });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Hit;
    // The answer comes with the outcome, before the session's end: wait for it, so that its
    // process is idle again when the next request comes.
    for (;;) {
      const { sessions } = await emu.api<{ sessions: { state: string }[] }>(
        "/sessions?project=reuse&limit=20",
      );
      if (sessions.every((s) => s.state !== "created" && s.state !== "running")) return answer;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
}

describe("reuse_process: true", () => {
  const emu = useEmulator({ syncTimeoutMs: 15_000 });
  const copies: string[] = [];
  afterAll(() => {
    for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  });
  const hit = hitter(emu);

  it("shows in the API's view of the trigger, where set", async () => {
    await emu.deploy(FIXTURE);
    type View = { triggers: { name: string; reuse_process?: boolean }[] };
    const listed = await emu.api<View>("/triggers?project=reuse");
    const one = await emu.api<View>("/projects/reuse");
    for (const { triggers } of [listed, one]) {
      const byName = Object.fromEntries(triggers.map((t) => [t.name, t]));
      expect(byName.hit!.reuse_process).toBe(true);
      expect(byName.fresh).not.toHaveProperty("reuse_process");
    }
  }, 60_000);

  it("runs a trigger's sessions in one process, module state kept, prints their own", async () => {
    const urls = await emu.deploy(FIXTURE);
    const first = await hit(urls.hit!, "one");
    const second = await hit(urls.hit!, "two");
    expect([first.n, second.n, second.pid]).toEqual([1, 2, first.pid]);
    const fresh = [await hit(urls.fresh!), await hit(urls.fresh!)];
    expect(fresh.map((h) => h.n)).toEqual([1, 1]);
    // Each session's prints are its own: the import's only in the first.
    const { sessions } = await emu.api<{ sessions: { id: string; reuse_process?: boolean }[] }>(
      "/sessions?project=reuse&limit=10",
    );
    const hits = sessions.filter((s) => s.reuse_process).map((s) => s.id);
    expect(hits).toHaveLength(2);
    const prints = await Promise.all(hits.map((id) => emu.prints(id)));
    expect(prints.sort((a, b) => a.length - b.length)).toEqual([
      ["hit 2 two"],
      ["importing handlers", "hit 1 one"],
    ]);
  }, 60_000);

  it("a redeploy gets new processes", async () => {
    const urls = await emu.deploy(FIXTURE);
    const before = await hit(urls.hit!);
    const again = await emu.deploy(FIXTURE);
    expect(again.hit).toBe(urls.hit); // the same webhook
    const after = await hit(urls.hit!);
    expect(after.n).toBe(1);
    expect(after.pid).not.toBe(before.pid);
  }, 60_000);

  it("refuses the option on a durable trigger, and deploys nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-reuse-"));
    copies.push(dir);
    cpSync(FIXTURE, dir, { recursive: true });
    const manifest = readFileSync(join(dir, "manifest.yaml"), "utf8")
      .replace("name: reuse", "name: reuse_durable")
      .replace("    reuse_process: true", "    reuse_process: true\n    is_durable: true");
    writeFileSync(join(dir, "manifest.yaml"), manifest);
    const res = await fetch(`${emu.url}/api/v1/deploy`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ manifest, manifest_file: "manifest.yaml", files: {} }),
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toMatch(/problem\+json/);
    const problem = (await res.json()) as { detail: string };
    expect(problem.detail).toBe(
      "manifest.yaml:10: triggers[0].reuse_process: reuse_process is only for non-durable triggers: a durable session is replayed from fresh module state",
    );
    const projects = await emu.api<{ projects: { name: string }[] }>("/projects");
    expect(projects.projects.map((p) => p.name)).not.toContain("reuse_durable");
  }, 60_000);
});

/**
 * An emulator of its own, with `flags`, for the tests of one describe. The returned function
 * deploys the fixture and gives a hit on its `reuse_process` trigger (answered once ended).
 */
function useBounded(flags: Partial<Settings>) {
  const emu = useEmulator({ syncTimeoutMs: 15_000, ...flags });
  const hit = hitter(emu);
  return async () => {
    const urls = await emu.deploy(FIXTURE);
    return () => hit(urls.hit!);
  };
}

const gone = async (pid: number) => {
  while (alive(pid)) await new Promise((r) => setTimeout(r, 20));
};

describe("reuse_process: true, with the bounds set (SVC_REUSE_SESSIONS, _IDLE, _POOL)", () => {
  describe("two sessions a process", () => {
    const deployed = useBounded({ reuseSessions: 2 });

    it("runs a third session on another process: one runs at most two", async () => {
      const hit = await deployed();
      const hits = [await hit(), await hit(), await hit()];
      expect(hits.map((h) => h.n)).toEqual([1, 2, 1]);
      expect(hits[1]!.pid).toBe(hits[0]!.pid);
      expect(hits[2]!.pid).not.toBe(hits[0]!.pid);
      await gone(hits[0]!.pid); // it ended after its second session, and was reaped
    }, 60_000);
  });

  describe("a short idle time", () => {
    const deployed = useBounded({ reuseIdleMs: 300 });

    it("ends an idle process after it: the next session runs on a fresh one", async () => {
      const hit = await deployed();
      const first = await hit();
      await gone(first.pid);
      const next = await hit();
      expect([next.n, next.pid === first.pid]).toEqual([1, false]);
    }, 60_000);
  });

  describe("no idle process kept", () => {
    const deployed = useBounded({ reusePool: 0 });

    it("runs every session on a fresh process", async () => {
      const hit = await deployed();
      const hits = [await hit(), await hit()];
      expect(hits.map((h) => h.n)).toEqual([1, 1]);
      expect(hits[1]!.pid).not.toBe(hits[0]!.pid);
    }, 60_000);
  });
});
