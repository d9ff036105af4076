import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");

function pgrep(...args: string[]): number[] {
  try {
    return execFileSync("pgrep", args, { encoding: "utf8" }).trim().split("\n").map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** The deployment-warm fork servers of this file's emulator (children of this process). */
const warmServers = () => pgrep("-P", String(process.pid), "-f", "warm-dir");

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined) {
  const deadline = Date.now() + 60_000; // room for a slow machine's forks and imports
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Hit {
  n: number;
  color: string;
  ppid: number;
}

describe("deployment-warm Python", () => {
  const emu = useEmulator({ syncTimeoutMs: 15_000 });

  const hit = async (url: string): Promise<Hit> => {
    const res = await fetch(url, { method: "POST" });
    expect(res.status).toBe(200);
    return (await res.json()) as Hit;
  };

  it("forks sessions from a server that imported the project, with fresh module state", async () => {
    const { hit: url } = await emu.deploy(join(FIXTURES, "warm-deploy"));
    const first = await hit(url!);
    expect(first).toMatchObject({ n: 1, color: "red" });
    // The first session ran cold and started the deployment's warm server.
    const server = await until("a warm server", () => warmServers()[0]);
    await until("the warm server to serve", async () =>
      (await hit(url!)).ppid === server ? true : undefined,
    );
    const sessions = await Promise.all([hit(url!), hit(url!), hit(url!)]);
    for (const s of sessions) expect(s).toEqual({ n: 1, color: "red", ppid: server });
    // What the module prints at import is in every session's prints, warm or cold.
    const { sessions: records } = await emu.api<{ sessions: { id: string }[] }>(
      "/sessions?project=warm_deploy&limit=3",
    );
    // A sync answer comes at the outcome; the session's prints are stored at its end, after.
    for (const r of records) {
      const printed = await until("the session's prints stored", async () => {
        const p = await emu.prints(r.id);
        return p.length > 0 ? p : undefined;
      });
      expect(printed).toEqual(["importing handlers"]);
    }
  });

  it("retires the warm server when a var changes; the next session sees the new value", async () => {
    const url = (await emu.deploy(join(FIXTURES, "warm-deploy"))).hit!;
    // The deploy starts the new deployment's warm server and retires the previous test's: wait
    // until only one is left and it serves this deployment.
    const old = await until("one warm server serving", async () => {
      const servers = warmServers();
      if (servers.length !== 1) return undefined;
      return (await hit(url)).ppid === servers[0] ? servers[0] : undefined;
    });
    await emu.api("/envs/warm_deploy/vars/COLOR", {
      method: "PUT",
      body: JSON.stringify({ value: "blue" }),
    });
    expect(await hit(url)).toMatchObject({ n: 1, color: "blue" });
    const fresh = await until("a new warm server", () => {
      const found = warmServers().filter((pid) => pid !== old);
      return found.length ? found[0] : undefined;
    });
    await until("the old server to exit", () => (warmServers().includes(old!) ? undefined : true));
    const again = await until("the new server to serve", async () => {
      const h = await hit(url);
      return h.ppid === fresh ? h : undefined;
    });
    expect(again).toEqual({ n: 1, color: "blue", ppid: fresh });
  });

  it("replaces a warm server that died", async () => {
    const url = (await emu.deploy(join(FIXTURES, "warm-deploy"))).hit!;
    // The one serving this deployment, once ready: the deploy started it, and a retired server
    // of an earlier test may still be exiting beside it.
    const server = await until("a warm server serving", async () => {
      const { ppid } = await hit(url);
      return warmServers().includes(ppid) ? ppid : undefined;
    });
    process.kill(server!, "SIGKILL");
    await until("it to be gone", () => (warmServers().includes(server!) ? undefined : true));
    expect(await hit(url)).toMatchObject({ n: 1 });
    const replacement = await until("a replacement", async () => {
      await hit(url);
      const found = warmServers().filter((pid) => pid !== server);
      return found.length ? found[0] : undefined;
    });
    expect(replacement).not.toBe(server);
  });

  it("reports an import that fails on every session, as without warm servers", async () => {
    const url = (await emu.deploy(join(FIXTURES, "warm-broken"))).hit!;
    const before = warmServers();
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url, { method: "POST" });
      expect(res.status).toBe(502);
      // The 502 is the session's end as decided; its record may be stored a moment after.
      const latest = await until("the session's end stored", async () => {
        const { sessions } = await emu.api<{
          sessions: { id: string; state: string; error: { message: string } }[];
        }>("/sessions?project=warm_broken&limit=1");
        return sessions[0]?.state === "running" ? undefined : sessions[0];
      });
      expect(latest).toMatchObject({
        state: "error",
        error: { message: "RuntimeError: this module refuses to import" },
      });
    }
    // Its warm server could not import the module either, and does not stay.
    await until("the failed warm server to exit", () =>
      warmServers().every((pid) => before.includes(pid)) ? true : undefined,
    );
  });

  it("changing vars while 50 sessions start: a retired server kills none of them", async () => {
    const url = (await emu.deploy(join(FIXTURES, "warm-deploy"))).hit!;
    // Every session a process of its own from the warm server (as durable sessions are), none
    // from the idle processes kept for reuse.
    await emu.api("/envs/warm_deploy/vars/HOOKLINE_FRESH_PROCESS", {
      method: "PUT",
      body: JSON.stringify({ value: "1" }),
    });
    await until("a warm server serving", async () => {
      const { ppid } = await hit(url);
      return warmServers().includes(ppid) ? ppid : undefined;
    });
    const setColor = (value: string) =>
      emu.api("/envs/warm_deploy/vars/COLOR", { method: "PUT", body: JSON.stringify({ value }) });
    let before = "start";
    await setColor(before);
    // Three rounds: before the fix about one in two killed a session (the moment between a
    // spare's accept and its server hearing of it is short, and needs a few tries to hit).
    for (let round = 0; round < 3; round++) {
      const colors = ["red", "green", "blue", "amber", "teal", "plum"].map((c) => `${c}${round}`);
      // Each var change re-prepares the deployment: its warm server is retired while sessions
      // take its processes, and a new one starts, to be retired by the next change in turn.
      const changes = (async () => {
        for (const [i, c] of colors.entries()) {
          await new Promise((r) => setTimeout(r, 40 + 30 * i));
          await setColor(c);
        }
      })();
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 8));
          const res = await fetch(url, { method: "POST" });
          return { status: res.status, body: (await res.json()) as Partial<Hit> };
        }),
      );
      await changes;
      const { sessions } = await emu.api<{ sessions: { id: string }[] }>(
        "/sessions?project=warm_deploy&limit=50",
      );
      const ended = await Promise.all(sessions.map((s) => emu.ended(s.id)));
      const ends = ended.map((s) => `${s.state}${s.error ? `: ${s.error.message}` : ""}`);
      expect(ends.filter((e) => e !== "completed")).toEqual([]);
      for (const a of answers) {
        expect(a, JSON.stringify(a)).toMatchObject({ status: 200, body: { n: 1 } });
        expect([before, ...colors]).toContain(a.body.color);
      }
      before = colors.at(-1)!;
    }
  }, 180_000); // 150 sessions and 18 var changes: room for a loaded machine
});
