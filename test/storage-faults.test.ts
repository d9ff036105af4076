// Storage that fails under a running service: a full disk and a read-only data home (a tiny
// tmpfs: tests run as root, where chmod stops no write). Webhooks answer 503 with Retry-After,
// never 202 for an event that was not stored; once storage is back the service recovers by
// itself. Real service, real Python, real HTTP (see docs/limits.md).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "faults");
const store = mkdtempSync(join(tmpdir(), "hookline-tmpfs-"));

describe("storage that fails", () => {
  beforeAll(() => {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", store]);
  });
  afterAll(() => {
    execFileSync("umount", ["-l", store]);
    rmSync(store, { recursive: true, force: true });
  });
  describe("under a running service", () => storageFaults());
});

/**
 * `mount -o remount,ro`, retried while the kernel answers "busy": it refuses while a file there
 * is open for writing (the service's write-behind of the previous session may be finishing).
 */
async function remountReadOnly(dir: string) {
  for (let attempt = 0; ; attempt++) {
    try {
      execFileSync("mount", ["-o", "remount,ro", dir], { stdio: "pipe" });
      return;
    } catch (e) {
      const busy = String((e as { stderr?: Buffer }).stderr ?? "").includes("busy");
      if (!busy || attempt >= 100) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function storageFaults() {
  const emu = useEmulator({ storage: `fs:${store}` });
  let urls: Record<string, string>;

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  }, 60_000);

  const events = async () =>
    (await emu.api<{ events: unknown[] }>("/events?limit=1000")).events.length;

  async function refusedThenRecovered(fail: () => void | Promise<void>, heal: () => void) {
    const before = await events();
    await fail();
    const res = await fetch(urls.fine!, { method: "POST", body: "{}" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await res.json()) as { detail: string };
    expect(problem.detail).toBe("storage is unavailable; retry later");
    heal();
    expect(await events()).toBe(before); // nothing was stored for the refused request
    // Back without a restart: the next webhook is stored and its session runs to the end.
    const again = await fetch(urls.fine!, { method: "POST", body: "{}" });
    expect(again.status).toBe(202);
    const { session_id } = (await again.json()) as { session_id: string };
    expect((await emu.ended(session_id)).state).toBe("completed");
    expect(await events()).toBe(before + 1);
  }

  it("a full disk: 503 with Retry-After, then recovery once there is room", async () => {
    const filler = join(store, "filler");
    await refusedThenRecovered(
      () => {
        try {
          writeFileSync(filler, Buffer.alloc(1024 * 1024));
        } catch (e) {
          expect((e as NodeJS.ErrnoException).code).toBe("ENOSPC");
        }
      },
      () => rmSync(filler),
    );
  });

  it("a session that ends while storage refuses writes: its end is stored once storage is back", async () => {
    const gate = mkdtempSync(join(tmpdir(), "hookline-gate-"));
    try {
      const res = await fetch(urls.gate!, { method: "POST", body: gate });
      expect(res.status).toBe(202);
      const { session_id } = (await res.json()) as { session_id: string };
      const state = async () =>
        (await emu.api<{ session: { state: string } }>(`/sessions/${session_id}`)).session.state;
      await until("the session to run", async () => (await state()) === "running" || undefined);
      await remountReadOnly(store);
      try {
        writeFileSync(join(gate, "open"), "");
        await until("the handler to end", () => existsSync(join(gate, "done")) || undefined);
        // Its end was refused (and is being tried again): storage still holds what it had
        // stored before (running, or created if that write was refused too).
        await new Promise((r) => setTimeout(r, 300));
        expect(["created", "running"]).toContain(await state());
      } finally {
        execFileSync("mount", ["-o", "remount,rw", store]);
      }
      await until("its end stored", async () => (await state()) === "completed" || undefined);
    } finally {
      rmSync(gate, { recursive: true, force: true });
    }
  });

  it("an unwritable data home: 503 with Retry-After, then recovery once writable", async () => {
    await refusedThenRecovered(
      () => remountReadOnly(store),
      () => execFileSync("mount", ["-o", "remount,rw", store]),
    );
  });
}
