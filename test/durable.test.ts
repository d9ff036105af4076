import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { forkedProcesses } from "./support/processes.ts";
import { until, untilEach } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "durable");
const post = (url: string, body = "") => fetch(url, { method: "POST", body });

// Each test waits for what its sessions do; the timeout is room for a slow, busy machine.
describe("durable sessions", { timeout: 300_000 }, () => {
  // A held request waits through a kill and a resume: on a slow machine too.
  const emu = useEmulator({ evictAfterMs: 0, syncTimeoutMs: 120_000 });
  let urls: Record<string, string>;
  let work: string;

  /** Waits until the session has been resumed once. */
  async function resumed(id: string) {
    await until(`session ${id} to be resumed`, async () => {
      const { session } = await emu.api<{ session: { attempts: number } }>(`/sessions/${id}`);
      return session.attempts >= 1;
    });
  }

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  });

  beforeEach(async () => {
    work = mkdtempSync(join(tmpdir(), "hookline-durable-"));
    await emu.api("/envs/durable_rules/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
  });

  it("resumes after its Python process is SIGKILLed: activities once, prints once", async () => {
    const res = await post(urls.steps!);
    const { session_id } = (await res.json()) as { session_id: string };
    const pidFile = join(work, "pid");
    const pid = Number(
      await until("the pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")),
    );
    // The pid file is written inside `report_pid()`: kill only once its step is in the journal.
    await until("report_pid() journaled", async () => {
      const { journal } = await emu.api<{ journal: unknown[] }>(`/sessions/${session_id}/log`);
      return journal.length >= 2;
    });
    process.kill(pid, "SIGKILL");
    // The resumed process replays `record("one")` and `report_pid()`, then waits again.
    await resumed(session_id);
    writeFileSync(join(work, "go"), "");
    const record = await emu.ended(session_id);
    expect(record.state).toBe("completed");
    expect(record.attempts).toBe(1);
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("one\ntwo\n");
    expect(await emu.prints(session_id)).toEqual(["first print", "done: ONE TWO"]);
    const { journal } = await emu.api<{ journal: { function: string; replayed: boolean }[] }>(
      `/sessions/${session_id}/log`,
    );
    expect(journal.map((s) => [s.function, s.replayed])).toEqual([
      ["handlers.record", true],
      ["handlers.report_pid", true],
      ["handlers.wait_for_go", false],
      ["handlers.record", false],
    ]);
  });

  it("answers a held sync request from the resumed session", async () => {
    const held = post(urls.sync_steps!);
    const pidFile = join(work, "pid");
    const pid = Number(
      await until("the pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")),
    );
    process.kill(pid, "SIGKILL");
    const { sessions } = await emu.api<{ sessions: { id: string }[] }>(
      "/sessions?project=durable_rules&limit=1",
    );
    await resumed(sessions[0]!.id);
    writeFileSync(join(work, "go"), "");
    const res = await held;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ one: "SYNC-ONE" });
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("sync-one\n");
  });

  it("fails a replay that takes another path as non-deterministic", async () => {
    const res = await post(urls.drift!);
    const { session_id } = (await res.json()) as { session_id: string };
    const record = await emu.ended(session_id);
    expect(record.state).toBe("error");
    expect(record.error?.message).toContain("NonDeterminismError");
    expect(record.error?.message).toContain("step 0");
    expect(record.error?.message).toContain("handlers.path_a");
    expect(record.error?.message).toContain("handlers.path_b");
    expect(await emu.prints(session_id)).toEqual(["a"]);
  });

  it("fails a replay that returns before the journal's last step as non-deterministic", async () => {
    const res = await post(urls.shortcut!);
    const { session_id } = (await res.json()) as { session_id: string };
    const record = await emu.ended(session_id);
    expect(record.state).toBe("error");
    expect(record.error?.message).toBe(
      "NonDeterminismError: step 0: the handler returned but the journal recorded 1 steps; " +
        "a durable handler must make the same calls in the same order",
    );
  });

  it("turns time.sleep into a durable timer that releases the process", async () => {
    const t0 = Date.now();
    const { session_id } = (await (await post(urls.napper!)).json()) as { session_id: string };
    const record = await emu.ended(session_id);
    expect(record.state).toBe("completed");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(800);
    expect(await emu.prints(session_id)).toEqual(["going to sleep", "woke up: AFTER-NAP"]);
    const { entries, journal } = await emu.api<{
      entries: { text?: string }[];
      journal: { kind: string; replayed: boolean }[];
    }>(`/sessions/${session_id}/log`);
    expect(entries.some((e) => e.text?.includes("process released"))).toBe(true);
    expect(journal.map((s) => [s.kind, s.replayed])).toEqual([
      ["sleep", true],
      ["activity", false],
    ]);
  });

  it("keeps every print of a resumed run: an activity's print is not one the replay makes again", async () => {
    const { session_id } = (await (await post(urls.loud_napper!)).json()) as { session_id: string };
    expect((await emu.ended(session_id)).state).toBe("completed");
    // The run after the nap counts the workflow code's prints alone as printed before it.
    expect(await emu.prints(session_id)).toEqual([
      "said in the activity",
      "before the nap: ok",
      "after the nap",
      "the end",
    ]);
    const { entries } = await emu.api<{ entries: { kind: string; outside?: true }[] }>(
      `/sessions/${session_id}/log`,
    );
    const prints = entries.filter((e) => e.kind === "print");
    expect(prints.map((e) => e.outside ?? false)).toEqual([true, false, false, false]);
  });

  it("holds many waiting sessions without a process each, and wakes them all", async () => {
    const n = Number(process.env.HOOKLINE_WAITERS ?? 1000);
    const ids: string[] = [];
    for (let i = 0; i < n; i += 30) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(30, n - i) }, () => post(urls.waiter!)),
      );
      for (const r of batch) ids.push(((await r.json()) as { session_id: string }).session_id);
    }
    // Every session subscribed, waits, and gave its process back: however long a slow machine
    // takes to start a thousand, as long as more keep parking.
    await untilEach("every session to park", ids, async (id) => {
      const { entries } = await emu.api<{ entries: { text?: string }[] }>(`/sessions/${id}/log`);
      return entries.some((e) => e.text?.includes("process released"));
    });
    // Counted under this test's own fork server: other files run sessions at the same time.
    await until("the processes to go", () => forkedProcesses() < 40);
    await post(urls.signal!, "the signal");
    const states = new Map<string, string>();
    await untilEach("every session to wake and end", ids, async (id) => {
      const { session } = await emu.api<{ session: { state: string } }>(`/sessions/${id}`);
      states.set(id, session.state);
      return ["completed", "error", "stopped"].includes(session.state);
    });
    expect(new Set(states.values()), "the woken sessions' states").toEqual(new Set(["completed"]));
    expect(await emu.prints(ids[0]!)).toEqual(["woke with the signal"]);
  }, 1_800_000); // the waits above fail once progress stops; this is only a backstop
});
