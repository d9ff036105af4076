import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");

/** The deployment-warm fork servers of this file's emulator (children of this process). */
function warmServers(): number[] {
  try {
    const out = execFileSync("pgrep", ["-P", String(process.pid), "-f", "warm-dir"], {
      encoding: "utf8",
    });
    return out.trim().split("\n").map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Processes that keep a core busy at the default priority, as other work on a machine does. */
function burners(n: number): ChildProcess[] {
  return Array.from({ length: n }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
}

describe("deployment-warm Python under load", () => {
  const emu = useEmulator({ syncTimeoutMs: 30_000 });
  let load: ChildProcess[] = [];
  afterEach(() => {
    for (const child of load) child.kill("SIGKILL");
    load = [];
  });

  const hit = async (url: string) => {
    const res = await fetch(url, { method: "POST" });
    expect(res.status).toBe(200);
    return (await res.json()) as { n: number; ppid: number };
  };

  it("forks every session from the warm server while the machine is busy (counted, not timed)", async () => {
    const url = (await emu.deploy(join(FIXTURES, "warm-deploy"))).hit!;
    let server: number | undefined;
    for (let i = 0; i < 400 && server === undefined; i++) {
      const { ppid } = await hit(url);
      if (warmServers().includes(ppid)) server = ppid;
    }
    expect(server).toBeGreaterThan(0);
    // Three processes busy at the default priority on top of whatever else runs here: the
    // sessions (at a lower priority) get less CPU, but each must still come from the warm server.
    load = burners(3);
    const sequential: number[] = [];
    for (let i = 0; i < 20; i++) sequential.push((await hit(url)).ppid);
    const concurrent = await Promise.all(Array.from({ length: 12 }, () => hit(url)));
    const parents = [...sequential, ...concurrent.map((h) => h.ppid)];
    const cold = parents.filter((ppid) => ppid !== server).length;
    expect({ sessions: parents.length, cold }).toEqual({ sessions: 32, cold: 0 });
    for (const h of concurrent) expect(h.n).toBe(1); // fresh module state in each
  });
});
