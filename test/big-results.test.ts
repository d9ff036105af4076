import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

/**
 * Activity results too big for one protocol message (issue 40): a durable session's activity
 * returns about 20 MB, which goes to the service in parts and is stored apart from its journal
 * step. The whole service is SIGKILLed after the step is on record and started again on the
 * same data home: the replay gets the same value back without running the activity again. A
 * value over the 64 MiB bound ends the session in `error` naming the limit.
 */

const FIXTURE = join(import.meta.dirname, "fixtures", "big_results");

interface Session {
  state: string;
  error?: { message: string };
}

describe("activity results kept apart from the journal", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-big-"));
  const work = mkdtempSync(join(tmpdir(), "hookline-big-work-"));
  let service: ResultPromise | null = null;
  let url = "";
  let bigId = "";
  afterAll(async () => {
    if (service?.pid) process.kill(-service.pid, "SIGKILL");
    await service?.catch(() => {});
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  async function start(port: number, python: string): Promise<void> {
    service = execa(
      "node",
      [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "dev", "--port", String(port)],
      {
        env: {
          XDG_DATA_HOME: join(home, "data"),
          XDG_CONFIG_HOME: join(home, "config"),
          SVC_WORKER_PYTHON: python,
        },
        detached: true, // its own process group, so one kill reaches every child
        reject: false,
      },
    );
    url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 60_000);
  }

  async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await fetch(`${url}/api/v1${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
    });
    return (await res.json()) as T;
  }

  const ended = (id: string) =>
    until(`session ${id} to end`, async () => {
      const { session } = await api<{ session: Session }>(`/sessions/${id}`);
      return ["completed", "error", "stopped"].includes(session.state) && session;
    }) as Promise<Session>;

  const prints = async (id: string) =>
    (await api<{ prints: { text: string }[] }>(`/sessions/${id}/prints`)).prints.map((p) => p.text);

  /** The service's peak resident memory (VmHWM), in MiB. */
  const peakMiB = (pid = service!.pid!, what = "VmHWM") => {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Math.round(Number(new RegExp(`${what}:\\s+(\\d+)`).exec(status)![1]) / 1024);
  };

  it("journals a 20 MB result, and a replay after kill -9 returns it without running it", async () => {
    const python = await testPython();
    const port = await freePort();
    await start(port, python);
    expect((await deployFolder(url, FIXTURE)).status).toBe(200);
    await api("/envs/big_results/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=big_results",
    );
    const path = (name: string) => triggers.find((t) => t.name === name)!.webhook_path;

    const before = peakMiB();
    const t0 = Date.now();
    const big = (await (await fetch(url + path("big"), { method: "POST" })).json()) as {
      session_id: string;
    };
    // The pid file is written by the activity after the big one: its step is on record (acked).
    const pidFile = join(work, "pid");
    await until(
      "the big result journaled",
      () => existsSync(pidFile) && readFileSync(pidFile, "utf8"),
    );
    const journaled = Date.now() - t0;
    const peak = peakMiB();
    const child = peakMiB(Number(readFileSync(join(work, "pid"), "utf8")));
    const [first] = await prints(big.session_id);
    expect(first).toBe("got 20000000 bc01a03f3f505eaf 4950");

    process.kill(-service!.pid!, "SIGKILL");
    await service;
    await start(port, python);
    const t1 = Date.now();
    writeFileSync(join(work, "go"), "");
    const record = await ended(big.session_id);
    expect(record.error?.message).toBeUndefined();
    expect(record.state).toBe("completed");
    console.log(
      `20 MB result: journaled ${journaled} ms after the webhook (service peak RSS ${before} MiB ` +
        `before, ${peak} MiB after; the session's Python process ${child} MiB); ` +
        `resumed and completed ${Date.now() - t1} ms after the go (peak RSS ${peakMiB()} MiB)`,
    );
    // The activity ran once, before the kill; the replay got its value from the journal.
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("big 20000000\n");
    expect(await prints(big.session_id)).toEqual([
      "got 20000000 bc01a03f3f505eaf 4950",
      "after the wait 20000000 bc01a03f3f505eaf 4950",
    ]);
    const { journal } = await api<{ journal: { function: string; replayed: boolean }[] }>(
      `/sessions/${big.session_id}/log`,
    );
    expect(journal.map((s) => [s.function, s.replayed])).toEqual([
      ["handlers.big", true],
      ["handlers.wait_for_go", false],
    ]);
    bigId = big.session_id;
  }, 180_000);

  it("re-runs that session from step 2: checked in a sandbox, then replayed from copied parts", async () => {
    // From its last step: the check replays both steps (the big one from its parts) first.
    const res = await fetch(`${url}/api/v1/sessions/${bigId}/rerun?from=2`, { method: "POST" });
    const body = (await res.json()) as { session: { id: string }; detail?: string };
    expect(res.status, body.detail).toBe(201);
    const record = await ended(body.session.id);
    expect(record.error?.message).toBeUndefined();
    expect(record.state).toBe("completed");
    // The first print is replayed code (quiet); the second runs live, past the journal.
    expect(await prints(body.session.id)).toEqual([
      "after the wait 20000000 bc01a03f3f505eaf 4950",
    ]);
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("big 20000000\n");
  }, 120_000);

  /** Starts a session of `huge` whose result pickles to the size `bytes` says; its record. */
  async function huge(body: string): Promise<{ id: string; record: Session; ms: number }> {
    const { triggers } = await api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=big_results",
    );
    const path = triggers.find((t) => t.name === "huge")!.webhook_path;
    const t0 = Date.now();
    const res = await fetch(url + path, { method: "POST", body });
    const { session_id } = (await res.json()) as { session_id: string };
    const record = await ended(session_id);
    return { id: session_id, record, ms: Date.now() - t0 };
  }

  it("takes a result of exactly 64 MiB pickled; one byte more ends the session in error naming the limit", async () => {
    const edge = await huge("67108606"); // pickles to 67,108,864 bytes
    expect(edge.record.error?.message).toBeUndefined();
    expect(edge.record.state).toBe("completed");
    expect((await prints(edge.id))[0]).toMatch(/^got 67108606 [0-9a-f]{16} 4950$/);
    const now = peakMiB(service!.pid!, "VmRSS");
    console.log(
      `64 MiB result: completed in ${edge.ms} ms (service peak RSS ${peakMiB()} MiB, ${now} MiB at its end)`,
    );
    const over = await huge("67108607");
    expect(over.record.state).toBe("error");
    expect(over.record.error?.message).toBe(
      "ActivityError: the result of activity handlers.big is 67108865 bytes pickled, over " +
        "67108864 bytes (64 MiB), the most a journaled value may hold; return less (keep big " +
        "data elsewhere and return where it is)",
    );
    expect(await prints(over.id)).toEqual([]);
  }, 120_000);

  it("ends a session whose result is far over 64 MiB in error, naming the limit", async () => {
    const { id, record } = await huge(""); // 70 MiB
    expect(record.state).toBe("error");
    expect(record.error?.message).toContain(
      "the result of activity handlers.big is 73400578 bytes pickled, over 67108864 bytes (64 MiB)",
    );
    expect(await prints(id)).toEqual([]);
  }, 120_000);
});
