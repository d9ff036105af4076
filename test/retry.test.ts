import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionLogEntry, SessionRecord } from "../src/model/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { type FlakyApi, flakyApi } from "./support/flaky-api.ts";
import { until } from "./support/until.ts";

/**
 * Retry policies end to end, real Python: an activity that fails twice and then succeeds, a
 * non-retryable error, the trigger's policy over a library outside the project, and durable
 * retries whose waits park the session and can be stopped. (Across a kill -9 of the service and
 * across two instances: test/retry-restart.test.ts.)
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "retry");
const RETRY_LIB = join(import.meta.dirname, "fixtures", "retry-lib");

type Activity = Extract<SessionLogEntry, { kind: "activity" }>;

describe("retry policies", () => {
  const emu = useEmulator({ evictAfterMs: 500 });
  let api: FlakyApi;
  let urls: Record<string, string>;

  beforeAll(async () => {
    api = await flakyApi();
    urls = await emu.deploy(FIXTURE);
    for (const [name, value] of [
      ["STANDIN", api.url],
      ["LIBDIR", RETRY_LIB],
    ]) {
      await emu.api(`/envs/retry_rules/vars/${name}`, {
        method: "PUT",
        body: JSON.stringify({ value }),
      });
    }
  });
  afterAll(() => api?.close());

  async function run(trigger: string): Promise<{ id: string; record: SessionRecord }> {
    const res = await fetch(urls[trigger]!, { method: "POST" });
    const { session_id: id } = (await res.json()) as { session_id: string };
    return { id, record: await emu.ended(id) };
  }

  async function log(id: string) {
    return emu.api<{ entries: SessionLogEntry[]; journal: Record<string, unknown>[] }>(
      `/sessions/${id}/log`,
    );
  }

  const attempts = (entries: SessionLogEntry[]) =>
    entries
      .filter((e): e is Activity => e.kind === "activity")
      .map((e) => ({ ok: e.ok, error: e.error, retry: e.retry }));

  it("tries a flaky activity again: it fails twice, then succeeds", async () => {
    const { id, record } = await run("flaky");
    expect(record.state).toBe("completed");
    expect(await emu.prints(id)).toEqual(["got 3"]);
    expect(api.calls(id)).toBe(3);
    const failed = "ConnectionError: stand-in answered 503";
    expect(attempts((await log(id)).entries)).toEqual([
      { ok: false, error: failed, retry: { attempt: 1, of: 4, next_in_ms: 50 } },
      { ok: false, error: failed, retry: { attempt: 2, of: 4, next_in_ms: 100 } },
      { ok: true, error: undefined, retry: { attempt: 3, of: 4 } },
    ]);
    const metrics = await (await fetch(`${emu.url}/metrics`)).text();
    expect(metrics).toContain(
      'hookline_activity_retries_total{project="retry_rules",trigger="flaky"} 2',
    );
  });

  it("raises a non-retryable error at once, with its attempts", async () => {
    const { id, record } = await run("denied");
    expect(record.state).toBe("error");
    expect(record.error?.message).toBe("PermissionError: stand-in answered 403");
    expect(await emu.prints(id)).toEqual(["denied after 1 attempt(s)"]);
    expect(api.calls(id)).toBe(1);
    expect(attempts((await log(id)).entries)).toEqual([
      { ok: false, error: "PermissionError: stand-in answered 403", retry: { attempt: 1, of: 4 } },
    ]);
    // Not tried again: not a retry.
    const metrics = await (await fetch(`${emu.url}/metrics`)).text();
    expect(metrics).not.toMatch(/hookline_activity_retries_total\{[^}]*trigger="denied"/);
  });

  it("applies the trigger's retry: to a call into a library outside the project", async () => {
    const { id, record } = await run("outside");
    expect(record.state).toBe("completed");
    expect(await emu.prints(id)).toEqual(["got 3"]);
    expect(attempts((await log(id)).entries).map((a) => a.retry)).toEqual([
      { attempt: 1, of: 3, next_in_ms: 50 },
      { attempt: 2, of: 3, next_in_ms: 100 },
      { attempt: 3, of: 3 },
    ]);
  });

  it("parks a durable session between attempts, and journals them", async () => {
    const { id, record } = await run("durable");
    expect(record.state).toBe("completed");
    expect(await emu.prints(id)).toEqual(["got 3"]);
    expect(api.calls(id)).toBe(3);
    const { entries, journal } = await log(id);
    const released = entries.filter(
      (e) => e.kind === "warning" && e.text === "waiting to retry flakyapi.get: process released",
    );
    expect(released).toHaveLength(2); // each wait (1.5 s) outlasts SVC_EVICT_AFTER (0.5 s)
    // Each wake is a replay: the attempts on record are not made again.
    expect(journal).toEqual([
      {
        seq: 0,
        kind: "activity",
        function: "flakyapi.get",
        ok: true,
        attempts: 3,
        replayed: false,
      },
    ]);
    expect(attempts(entries).map((a) => a.retry?.attempt)).toEqual([1, 2, 3]);
    // The trigger's `backoff: 1`: every wait is the first one's (1.5 s), never doubled.
    expect(attempts(entries).map((a) => a.retry?.next_in_ms)).toEqual([1500, 1500, undefined]);
  });

  it("ends a waiting retry with cli session stop", async () => {
    const res = await fetch(urls.patient!, { method: "POST" });
    const { session_id: id } = (await res.json()) as { session_id: string };
    await until("the session parked before its second attempt", async () =>
      (await log(id)).entries.some((e) => e.kind === "warning" && e.text.includes("released")),
    );
    const { journal } = await log(id);
    expect(journal[0]).toMatchObject({ attempts: 1, retry_at: expect.any(String) });
    const { session } = await emu.api<{ session: SessionRecord }>(`/sessions/${id}/stop`, {
      method: "POST",
    });
    expect(session.state).toBe("stopped");
    expect(api.calls(id)).toBe(1);
  });
});
