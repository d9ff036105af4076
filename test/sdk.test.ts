import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/**
 * The SDK's AutoKitteh surface through the real service and real Python: the project store,
 * start / signal / next_signal, outcome values, webhook URLs, http_outcome(event_id=…), in
 * durable and non-durable sessions. Durable sessions that wait are parked at once
 * (evictAfterMs 0), so the waits are also woken from parking.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "sdk");
const post = (url: string, body: unknown = {}) =>
  fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });

describe("the SDK's requests through the service", () => {
  const emu = useEmulator({
    evictAfterMs: 0,
    syncTimeoutMs: 60_000,
    publicUrl: "https://hooks.example.com/base",
  });
  let urls: Record<string, string>;
  const work = mkdtempSync(join(tmpdir(), "hookline-sdk-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const session = async (id: string) =>
    (await emu.api<{ session: SessionRecord }>(`/sessions/${id}`)).session;
  const stored = (key: string) =>
    emu.api<{ value: unknown; published: boolean }>(`/projects/sdkwire/store/${key}`, {
      allowError: true,
    });
  const deploy = async () => {
    urls ??= await emu.deploy(FIXTURE);
    return urls;
  };

  for (const mode of ["n", "d"] as const) {
    it(`store, public URL, webhook URL, limits, outcome value (${mode === "d" ? "durable" : "non-durable"})`, async () => {
      await deploy();
      const key = `hits_${mode}`;
      const first = await post(urls[`store_${mode}`]!, { key });
      expect(first.status).toBe(200);
      const a = (await first.json()) as Record<string, unknown>;
      const b = (await (await post(urls[`store_${mode}`]!, { key })).json()) as Record<
        string,
        unknown
      >;
      expect([a.n, b.n]).toEqual([1, 2]);
      expect(b.big).toBe(String(2n * 2n ** 64n));
      expect(b.doc).toEqual({ n: 2, pi: 3.5 });
      expect(a.hook).toBe(urls.store_n!.replace(emu.url, "https://hooks.example.com/base"));
      expect(a.too_big).toMatch(/^AutoKittehError: .*over the limit of 65536 bytes per value/);
      expect(a.not_number).toMatch(/^TypeError: /);
      expect(a.no_trigger).toMatch(/^ValueError: get_webhook_url: no trigger named "nope"/);
      // Published values: served without a token at the URL the handler was given.
      const publicUrl = String(a.public);
      expect(publicUrl).toMatch(/^https:\/\/hooks\.example\.com\/base\/store\/prj_/);
      const served = await fetch(
        `${publicUrl.replace("https://hooks.example.com/base", emu.url)}/${key}_doc`,
      );
      expect(await served.json()).toEqual({ n: 2, pi: 3.5 });
      // The store as the API sees it: big ints exact, the huge value never stored.
      expect((await stored(`${key}_big`)).value).toEqual({ $int: String(2n * 2n ** 64n) });
      expect((await stored(`${key}_huge`)).value).toBeUndefined();
      // The outcome value is on the session record.
      const sessions = await emu.api<{ sessions: SessionRecord[] }>(
        "/sessions?project=sdkwire&limit=100",
      );
      const mine = sessions.sessions.filter((s) => s.trigger_name === `store_${mode}`);
      expect(mine.map((s) => s.outcome_value)).toContainEqual({
        n: 2,
        big: { $int: String(2n * 2n ** 64n) },
      });
      expect(mine.every((s) => s.durable === (mode === "d"))).toBe(true);
    });

    it(`start, signal, next_signal: a fan-out (${mode === "d" ? "durable" : "non-durable"})`, async () => {
      await deploy();
      const res = await post(urls[`fan_${mode}`]!, { n: 3 });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { total: number; kids: string[] };
      expect(body.total).toBe(1 + 2 + 3);
      for (const kid of body.kids) {
        expect((await emu.ended(kid)).state).toBe("completed");
        // The stored record, as the API gives it once the session has ended.
        const rec = (await emu.api<{ session: SessionRecord }>(`/sessions/${kid}`)).session;
        expect(rec.state).toBe("completed");
        expect(rec.entry).toBe("handlers.py:child");
        expect(rec.durable).toBe(mode === "d");
        expect(rec.parent_id).toMatch(/^ses_/);
        expect(rec.memo).toEqual({ i: String(body.kids.indexOf(kid)) });
      }
      const parentId = (await emu.api<{ session: SessionRecord }>(`/sessions/${body.kids[0]}`))
        .session.parent_id!;
      // Its answer went out before it ended: wait for the end the re-run below relies on.
      await emu.ended(parentId);
      const parent = await session(parentId);
      expect(parent.outcome_value).toEqual({ total: 6, kids: body.kids });
      // The child's event is a stored "start" event carrying the data in the wire form.
      const kid = await session(body.kids[0]!);
      const { event } = await emu.api<{ event: { event_type: string; sdk_data: unknown } }>(
        `/events/${kid.event_id}`,
      );
      expect(event.event_type).toBe("start");
      expect(event.sdk_data).toMatchObject({ big: { $int: String(2n ** 65n) } });
      // Re-run, a child runs its own function on the same data: its parent has ended now, so
      // its signal is refused.
      const { session: again } = await emu.api<{ session: SessionRecord }>(
        `/sessions/${kid.id}/rerun`,
        { method: "POST" },
      );
      const rerun = await emu.ended(again.id);
      expect(rerun).toMatchObject({
        entry: "handlers.py:child",
        is_sync: false,
        parent_id: parent.id,
      });
      expect(rerun.error?.message).toMatch(/^ValueError: signal: session "ses_\w+" has ended/);
      expect(await emu.prints(again.id)).toEqual(["child 0"]);
    });

    it(`refusals reach the workflow as exceptions (${mode === "d" ? "durable" : "non-durable"})`, async () => {
      await deploy();
      const done = await post(urls.send!, { session_id: "ses_x", name: "n" });
      // A bad session id is refused at the call: the handler fails, 502.
      expect(done.status).toBe(502);
      const { session_id: ended } = (await done.json()) as { session_id: string };
      expect((await emu.ended(ended)).state).toBe("error");
      const res = await post(urls[`refuse_${mode}`]!, { ended });
      expect(res.status).toBe(200);
      const r = (await res.json()) as Record<string, string | null>;
      expect(r.no_file).toBe("ValueError: start: no file missing.py in this project's deployment");
      expect(r.no_function).toBe("ValueError: start: handlers.py has no top-level function nope");
      expect(r.other_project).toMatch(
        /^ValueError: start: sessions start only in their own project/,
      );
      expect(r.ended).toMatch(/^ValueError: signal: session "ses_\w+" has ended \(error\)/);
      expect(r.unknown).toMatch(/^ValueError: signal: no session "ses_0+z" in this project/);
      // AutoKitteh's text (the call, "inside activity"); still a RuntimeError to `except`.
      expect(r.in_activity).toMatch(/^ActivityCallError: get_value inside activity: /);
      expect(r.in_activity_is).toEqual([true, true]);
      expect(r.timeout).toBeNull();
      expect(r.big_data).toBe("ValueError: start: data: over the limit of 1048576 bytes of JSON");
      expect(r.big_payload).toBe(
        "ValueError: signal: payload: over the limit of 65536 bytes of JSON",
      );
    });

    it(`a signal wakes a waiting session (${mode === "d" ? "durable, parked" : "non-durable"})`, async () => {
      await deploy();
      const res = await post(urls[`wait_${mode}`]!);
      const { session_id } = (await res.json()) as { session_id: string };
      if (mode === "d") {
        // Parked: its process released while it waits for the signal.
        await until("parking", async () => {
          const log = await emu.api<{ entries: { kind: string; text?: string }[] }>(
            `/sessions/${session_id}/log`,
          );
          return log.entries.some((e) => e.text?.includes("process released"));
        });
      } else {
        await until("running", async () => (await session(session_id)).state === "running");
      }
      expect(
        (await post(urls.send!, { session_id, name: "go", payload: { n: 7, s: "x" } })).status,
      ).toBe(200);
      const rec = await emu.ended(session_id);
      expect(rec.state).toBe("completed");
      expect(rec.outcome_value).toEqual({ name: "go", payload: { n: 7, s: "x" } });
      expect(await emu.prints(session_id)).toEqual(["got go {'n': 7, 's': 'x'}"]);
      // Ended now: a signal to it is refused, the sender fails.
      expect((await post(urls.send!, { session_id, name: "go" })).status).toBe(502);
    });

    it(`http_outcome(event_id=…) answers another session's held request (${mode === "d" ? "durable" : "non-durable"})`, async () => {
      await deploy();
      await emu.api("/projects/sdkwire/store/held_event", { method: "DELETE" });
      const held = post(urls.held!);
      const eventId = (await until(
        "the held event",
        async () => (await stored("held_event")).value,
      )) as string;
      const answered = await post(urls[`answer_${mode}`]!, { event_id: eventId });
      const { session_id } = (await answered.json()) as { session_id: string };
      const res = await held;
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ answered_by: session_id });
    });
  }

  async function lastSession(trigger: string): Promise<string> {
    const { sessions } = await emu.api<{ sessions: SessionRecord[] }>(
      "/sessions?project=sdkwire&limit=100",
    );
    return sessions.find((s) => s.trigger_name === trigger)!.id;
  }

  it("durable: a killed process replays journaled SDK values (store add once, child started once)", async () => {
    await deploy();
    await emu.api("/envs/sdkwire/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const before = ((await stored("count")).value as number | undefined) ?? 0;
    const res = await post(urls.count_d!);
    const { session_id } = (await res.json()) as { session_id: string };
    const pidFile = join(work, "pid");
    const pid = Number(
      await until("the pid file", () => existsSync(pidFile) && readFileSync(pidFile, "utf8")),
    );
    process.kill(pid, "SIGKILL");
    await until("the resume", async () => (await session(session_id)).attempts >= 1);
    writeFileSync(join(work, "go"), "");
    const rec = await emu.ended(session_id);
    expect(rec.state).toBe("completed");
    expect(rec.attempts).toBe(1);
    expect((await stored("count")).value).toBe(before + 1);
    const { kid } = rec.outcome_value as { n: number; kid: string };
    expect((rec.outcome_value as { n: number }).n).toBe(before + 1);
    const { sessions } = await emu.api<{ sessions: SessionRecord[] }>(
      "/sessions?project=sdkwire&limit=1000",
    );
    expect(sessions.filter((s) => s.parent_id === session_id).map((s) => s.id)).toEqual([kid]);
    expect(await emu.prints(session_id)).toEqual([`count ${before + 1} kid 10`]);
    const log = await emu.api<{ journal: { kind: string; replayed: boolean }[] }>(
      `/sessions/${session_id}/log`,
    );
    expect(
      log.journal
        .filter((s) => s.kind === "store" || s.kind === "start_session")
        .every((s) => s.replayed),
    ).toBe(true);
  });

  it("cli store and cli session log", async () => {
    await deploy();
    const cli = async (...argv: string[]) => {
      const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
      const code = await runCli(argv, io);
      return { code, out, err };
    };
    expect((await cli("store", "set", "greeting", "hello", "--project", "sdkwire")).out).toEqual([
      'greeting = "hello"',
    ]);
    expect(
      (await cli("store", "set", "n", "18446744073709551617", "--project", "sdkwire")).out,
    ).toEqual(["n = 18446744073709551617"]);
    expect((await cli("store", "get", "n", "--project", "sdkwire")).out).toEqual([
      "18446744073709551617",
    ]);
    expect((await cli("store", "list", "--project", "sdkwire")).out).toEqual(
      expect.arrayContaining(["greeting", "n"]),
    );
    expect((await cli("store", "del", "n", "--project", "sdkwire")).code).toBe(0);
    const missing = await cli("store", "get", "n", "--project", "sdkwire");
    expect(missing.code).not.toBe(0);
    expect(missing.err.join("\n")).toMatch(/^error: .*no value under "n"/);
    const tooBig = await cli("store", "set", "big", "x".repeat(70_000), "--project", "sdkwire");
    expect(tooBig.err.join("\n")).toMatch(/^error: .*65536 bytes per value/);
    const res = await post(urls.store_n!, { key: "cli" });
    expect(res.status).toBe(200);
    const id = await lastSession("store_n");
    await emu.ended(id);
    const log = await cli("session", "log", id);
    expect(log.out).toContain(`outcome: {"n":1,"big":18446744073709551616}`);
  });
});
