import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSettings } from "../src/config.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/**
 * The SDK through the real service, with no SVC_PUBLIC_URL and processes never released:
 * URLs on the listening address, and a durable session killed while it waits in next_signal.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "sdk");
const post = (url: string, body: unknown = {}) =>
  fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });

describe("without SVC_PUBLIC_URL, processes never released", () => {
  const emu = useEmulator({ evictAfterMs: -1 });

  it("hands out URLs on the listening address", async () => {
    const urls = await emu.deploy(FIXTURE);
    const res = await post(urls.store_n!);
    const body = (await res.json()) as { hook: string; public: string };
    expect(body.hook).toBe(urls.store_n);
    expect(body.public).toMatch(new RegExp(`^${emu.url}/store/prj_\\w{26}$`));
    expect((await fetch(`${body.public}/hits_doc`)).status).toBe(200);
  });

  it("refuses a bad SVC_PUBLIC_URL at start", () => {
    expect(() => resolveSettings({}, { SVC_PUBLIC_URL: "ftp://x" })).toThrow(
      'SVC_PUBLIC_URL: expected an http(s) base URL, got "ftp://x"',
    );
    expect(resolveSettings({}, { SVC_PUBLIC_URL: "https://h.example/x/" }).publicUrl).toBe(
      "https://h.example/x",
    );
  });

  it("durable: a process killed while it waits in next_signal resumes and takes the signal", async () => {
    const work = mkdtempSync(join(tmpdir(), "hookline-sdk-"));
    try {
      const urls = await emu.deploy(FIXTURE);
      await emu.api("/envs/sdkwire/vars/WORKDIR", {
        method: "PUT",
        body: JSON.stringify({ value: work }),
      });
      const res = await post(urls.wait_pid_d!);
      const { session_id } = (await res.json()) as { session_id: string };
      const pidFile = join(work, "pid");
      const pid = Number(
        await until("the pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")),
      );
      // report_pid() on record: what the process does next is next_signal.
      await until("report_pid() journaled", async () => {
        const { journal } = await emu.api<{ journal: unknown[] }>(`/sessions/${session_id}/log`);
        return journal.length >= 1;
      });
      process.kill(pid, "SIGKILL");
      const session = async () =>
        (await emu.api<{ session: SessionRecord }>(`/sessions/${session_id}`)).session;
      await until("the resume", async () => (await session()).attempts >= 1);
      // Sent once resumed, waiting or not yet: a signal waits in the session's queue for it.
      expect((await post(urls.send!, { session_id, name: "go", payload: 5 })).status).toBe(200);
      const rec = await emu.ended(session_id);
      expect(rec.state).toBe("completed");
      expect(rec.outcome_value).toEqual({ name: "go", payload: 5 });
      const log = await emu.api<{ journal: { kind: string; ok: boolean }[] }>(
        `/sessions/${session_id}/log`,
      );
      expect(log.journal.map((s) => s.kind)).toEqual(["activity", "next_signal", "outcome_value"]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
