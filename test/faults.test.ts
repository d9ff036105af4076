// A Python process that dies the hard way, or hits a per-session resource limit: the session ends
// in `error` naming why, a held sync request answers 502 at once, nothing is left behind, and the
// service and other sessions go on. Real service, real Python, real HTTP (see docs/limits.md).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { forkServers, pgrep } from "./support/processes.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "faults");

/** Zombie children of the fork servers this test process runs. */
function zombies(): number[] {
  return forkServers().flatMap((server) =>
    pgrep("-P", String(server)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/stat`, "utf8").split(")")[1]!.trim().startsWith("Z");
      } catch {
        return false;
      }
    }),
  );
}

describe("faults and per-session resource limits", () => {
  const emu = useEmulator({
    sessionMemoryMib: 512,
    sessionFiles: 64,
    sessionCpuSeconds: 1,
    sessionProcesses: 40,
    // Sessions run at a lower priority: on a busy machine the CPU loop's 1 s of CPU may take more
    // than the default 10 s of wall time, which would end it as a workflow timeout instead.
    workflowTimeoutMs: 120_000,
    // Shorter than the test's own timeout: a session end that is not signalled to the held
    // request shows as this 504, not as a test that times out.
    syncTimeoutMs: 15_000,
  });
  let urls: Record<string, string>;
  let work: string;

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
    work = mkdtempSync(join(tmpdir(), "hookline-faults-"));
    await emu.api("/envs/faults/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
  }, 60_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  async function endOf(trigger: string) {
    const res = await fetch(urls[trigger]!, { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    return emu.ended(session_id);
  }

  it("a segfault ends the session in error naming SIGSEGV, and the child is reaped", async () => {
    const record = await endOf("segv");
    expect(record.state).toBe("error");
    expect(record.error?.message).toMatch(/killed by SIGSEGV/);
    await until("no zombie children", () => zombies().length === 0);
  });

  it("os._exit(3) ends the session in error naming the exit code", async () => {
    const record = await endOf("exit3");
    expect(record.state).toBe("error");
    expect(record.error?.message).toMatch(/exited with code 3/);
  });

  it("a process SIGKILLed mid-activity: the held sync request gets 502 at once", async () => {
    const pidFile = join(work, "pid");
    const answer = fetch(urls.killed!, { method: "POST", body: "{}" });
    const pid = Number(
      await until("the pid", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")),
    );
    process.kill(pid, "SIGKILL");
    const res = await answer;
    // At once: the end is signalled to the held request (502), before the sync timeout (504).
    expect(res.status, "the held request's answer").toBe(502);
    const { sessions } = await emu.api<{ sessions: { id: string; trigger_name: string }[] }>(
      "/sessions?limit=100",
    );
    const id = sessions.find((s) => s.trigger_name === "killed")?.id;
    expect(id).toBeDefined();
    const record = await emu.ended(id!);
    expect(record.error?.message).toMatch(/killed by SIGKILL/);
    await until("no zombie children", () => zombies().length === 0);
  });

  it("the memory limit ends the session in error naming it", async () => {
    const record = await endOf("memory");
    expect(record.state).toBe("error");
    // MemoryError under the address-space fallback, the OOM killer in a memory cgroup
    // (test/memory-limit.test.ts runs both ways).
    expect(record.error?.message).toMatch(/reached its memory limit of 512 MiB/);
  });

  it("the open files limit ends the session in error naming it", async () => {
    const record = await endOf("files");
    expect(record.state).toBe("error");
    expect(record.error?.message).toMatch(/open files limit of 64/);
  });

  it("the CPU limit ends the session in error naming it", async () => {
    const record = await endOf("cpu");
    expect(record.state).toBe("error");
    expect(record.error?.message).toMatch(/CPU limit of 1 s \(SIGXCPU\)/);
  }, 30_000);

  it("a fork bomb is contained by the process limit and reaped; other sessions run", async () => {
    const [bomb, fine] = await Promise.all([endOf("forks"), endOf("fine")]);
    expect(fine.state).toBe("completed");
    expect(bomb.state).toBe("error");
    expect(bomb.error?.message).toMatch(/process limit of 40/);
    const pgid = readFileSync(join(work, "pgid"), "utf8").trim();
    // Every process of the bomb's group is gone (killed by the fork server, then reaped).
    await until("the bomb's processes to go", () => pgrep("-g", pgid).length === 0);
    await until("no zombie children", () => zombies().length === 0);
    expect((await fetch(`${emu.url}/healthz`)).status).toBe(200);
  }, 30_000);

  it("a malformed message from a real process ends its session in error, and only that one", async () => {
    const [broken, fine] = await Promise.all([endOf("garbage"), endOf("fine")]);
    expect(broken.state).toBe("error");
    expect(broken.error?.message).toMatch(/^bad message from Python: /);
    expect(fine.state).toBe("completed");
    await until("no zombie children", () => zombies().length === 0);
  });
});
