// A Python process that dies the hard way, or hits a per-session resource limit: the session ends
// in `error` naming why, a held sync request answers 502 at once, nothing is left behind, and the
// service and other sessions go on. Real service, real Python, real HTTP (see docs/limits.md).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Settings } from "../src/config.ts";
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

/**
 * The service of one describe with the faults project deployed, and `endOf(trigger)`: a session
 * of it to its end. A session runs at a low priority, so on a busy machine its work may take
 * many times its CPU time: the workflow timeout is far past anything a test here waits for, and
 * the tests wait for the session's end, not for a time.
 */
function faultsService(flags: Partial<Settings>) {
  const emu = useEmulator({ workflowTimeoutMs: 600_000, ...flags });
  const the = { emu, urls: {} as Record<string, string>, work: "" };
  beforeAll(async () => {
    the.urls = await emu.deploy(FIXTURE);
    the.work = mkdtempSync(join(tmpdir(), "hookline-faults-"));
    await emu.api("/envs/faults/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: the.work }),
    });
  }, 60_000);
  afterAll(() => {
    if (the.work) rmSync(the.work, { recursive: true, force: true });
  });
  async function endOf(trigger: string) {
    const res = await fetch(the.urls[trigger]!, { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    return emu.ended(session_id);
  }
  return { the, endOf };
}

/** Each test's timeout: room for a session's work on a slow, busy machine; tests wait for ends. */
const SLOW_MACHINE_MS = 600_000;

describe("faults and per-session resource limits", { timeout: SLOW_MACHINE_MS }, () => {
  // No CPU limit here (its own service below): touching memory up to its limit costs CPU time
  // in page faults (16-84 µs a page on some machines), so a CPU limit could end the hog first.
  const { the, endOf } = faultsService({
    sessionMemoryMib: 128,
    sessionFiles: 64,
    sessionProcesses: 40,
    // Shorter than the test's own timeout: a session end that is not signalled to the held
    // request shows as this 504, not as a test that times out.
    syncTimeoutMs: 120_000,
  });
  const emu = the.emu;

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
    const pidFile = join(the.work, "pid");
    const answer = fetch(the.urls.killed!, { method: "POST", body: "{}" });
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
    expect(record.error?.message).toMatch(/reached its memory limit of 128 MiB/);
  });

  it("the open files limit ends the session in error naming it", async () => {
    const record = await endOf("files");
    expect(record.state).toBe("error");
    expect(record.error?.message).toMatch(/open files limit of 64/);
  });

  it("a fork bomb is contained by the process limit and reaped; other sessions run", async () => {
    const [bomb, fine] = await Promise.all([endOf("forks"), endOf("fine")]);
    expect(fine.state).toBe("completed");
    expect(bomb.state).toBe("error");
    expect(bomb.error?.message).toMatch(/process limit of 40/);
    const pgid = readFileSync(join(the.work, "pgid"), "utf8").trim();
    // Every process of the bomb's group is gone (killed by the fork server, then reaped).
    await until("the bomb's processes to go", () => pgrep("-g", pgid).length === 0);
    await until("no zombie children", () => zombies().length === 0);
    expect((await fetch(`${emu.url}/healthz`)).status).toBe(200);
  });

  it("a malformed message from a real process ends its session in error, and only that one", async () => {
    const [broken, fine] = await Promise.all([endOf("garbage"), endOf("fine")]);
    expect(broken.state).toBe("error");
    expect(broken.error?.message).toMatch(/^bad message from Python: /);
    expect(fine.state).toBe("completed");
    await until("no zombie children", () => zombies().length === 0);
  });
});

describe("the CPU limit", { timeout: SLOW_MACHINE_MS }, () => {
  // A service of its own: the limit would end any other session that spends a second of CPU.
  const { endOf } = faultsService({ sessionCpuSeconds: 1 });

  it("the CPU limit ends the session in error naming it", async () => {
    const record = await endOf("cpu");
    expect(record.state).toBe("error");
    expect(record.error?.message).toMatch(/CPU limit of 1 s \(SIGXCPU\)/);
  });
});
