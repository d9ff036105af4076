import { createHmac } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/** Every starter template in examples/, deployed and driven as its README says. */
const EXAMPLES = join(import.meta.dirname, "..", "examples");

const post = (url: string, body = "", headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", body, headers });

describe("examples", () => {
  const emu = useEmulator({ syncTimeoutMs: 15_000 });

  it("hello: 202 at once, the greeting in the prints", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "hello"));
    const res = await post(urls.hello!, JSON.stringify({ name: "Ada" }), {
      "content-type": "application/json",
    });
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    expect((await emu.ended(session_id)).state).toBe("completed");
    expect((await emu.prints(session_id))[0]).toBe("Hello, Ada!");
  });

  it("sync-echo: echoes JSON, 400 on bad input", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "sync-echo"));
    const ok = await post(urls.echo!, JSON.stringify({ message: "hi" }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-echo")).toBe("1");
    expect(ok.headers.get("content-type")).toBe("application/json");
    expect(await ok.json()).toEqual({ echo: "hi", length: 2 });
    const bad = await post(urls.echo!, "not json");
    expect(bad.status).toBe(400);
  });

  it("signature-check: 401 on a bad signature, 202 with the secret from var set", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "signature-check"));
    await emu.api("/envs/signed/vars/WEBHOOK_SECRET", {
      method: "PUT",
      body: JSON.stringify({ value: "topsecret", secret: true }),
    });
    const body = JSON.stringify({ ref: "main" });
    const sig = `sha256=${createHmac("sha256", "topsecret").update(body).digest("hex")}`;
    const good = await post(urls.github!, body, { "X-Hub-Signature-256": sig });
    expect(good.status).toBe(202);
    expect(await good.json()).toEqual({ accepted: true });
    const bad = await post(urls.github!, body, { "X-Hub-Signature-256": "sha256=00" });
    expect(bad.status).toBe(401);
    expect(await bad.text()).toBe("bad signature");
    // A redeploy keeps the value set with `cli var set`.
    await emu.deploy(join(EXAMPLES, "signature-check"));
    expect((await post(urls.github!, body, { "X-Hub-Signature-256": sig })).status).toBe(202);
  });

  it("wait-for-event: the decision answers the held request; 408 without one", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "wait-for-event"));
    const held = post(urls.request!, JSON.stringify({ ticket: "t-7" }));
    // Decisions sent once the session has subscribed (it prints right after), not a set time later.
    await until("the held session to subscribe", async () => {
      const { sessions } = await emu.api<{ sessions: { id: string }[] }>(
        "/sessions?project=approval",
      );
      const prints = await Promise.all(sessions.map((s) => emu.prints(s.id)));
      return prints.some((p) => p.includes("waiting for a decision on t-7"));
    });
    // Another ticket's decision does not match the filter.
    await post(urls.decisions!, JSON.stringify({ ticket: "t-8", verdict: "rejected" }));
    await post(urls.decisions!, JSON.stringify({ ticket: "t-7", verdict: "approved" }));
    const res = await held;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ticket: "t-7", status: "approved" });

    await emu.api("/envs/approval/vars/APPROVAL_TIMEOUT", {
      method: "PUT",
      body: JSON.stringify({ value: "0.5" }),
    });
    const timedOut = await post(urls.request!, JSON.stringify({ ticket: "t-9" }));
    expect(timedOut.status).toBe(408);
  });

  it("respond-then-work: 202 with Location first, the work continues", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "respond-then-work"));
    const res = await post(urls.job!);
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: string };
    expect(res.headers.get("location")).toBe(`/jobs/${job}`);
    const before = await emu.prints(job);
    expect(before).not.toContain(`job ${job}: finished`);
    expect((await emu.ended(job)).state).toBe("completed");
    expect(await emu.prints(job)).toContain(`job ${job}: finished`);
  });

  it("async-activity: async handler awaiting an async activity", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "async-activity"));
    const res = await post(urls.fanout!, "hooks are fun");
    expect(await res.json()).toEqual({
      results: [
        { word: "hooks", length: 5 },
        { word: "are", length: 3 },
        { word: "fun", length: 3 },
      ],
    });
  });

  it("activity-client: an unpicklable client lives inside one activity", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "activity-client"));
    const res = await post(urls.store!, "a note");
    expect(res.status).toBe(201);
    const { notes } = (await res.json()) as { notes: number };
    expect(notes).toBeGreaterThan(0);
    // A second note counts more (other runs may share the file): the database is really used.
    const again = await post(urls.store!, "another note");
    expect(((await again.json()) as { notes: number }).notes).toBeGreaterThan(notes);
    const { sessions } = await emu.api<{ sessions: { id: string }[] }>(
      "/sessions?project=activity_client",
    );
    expect(sessions).toHaveLength(2);
    for (const { id } of sessions) {
      const record = await emu.ended(id);
      expect(record.state, record.error?.message).toBe("completed");
      const { entries } = await emu.api<{ entries: { kind: string; function?: string }[] }>(
        `/sessions/${id}/log`,
      );
      // The connection is opened, used and closed in one call: one activity, and only its int
      // result crossed the pickle boundary (version: v2 pickles; a connection would fail it).
      const activities = entries.filter((e) => e.kind === "activity");
      expect(
        activities.map((e) => [e.function, (e as { ok?: boolean }).ok]),
        "the session's activities: the client's whole use, one call",
      ).toEqual([["handlers.save_and_count", true]]);
    }
  });

  it("store-counter: each hit counts once, the count is published and in the store API", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "store-counter"));
    const counts = await Promise.all(
      [1, 2, 3].map(
        async () => ((await (await post(urls.hit!)).json()) as { count: number }).count,
      ),
    );
    expect(counts.sort()).toEqual([1, 2, 3]);
    const last = (await (await post(urls.hit!)).json()) as { count: number; public: string };
    expect(last.count).toBe(4);
    expect(await (await fetch(last.public)).json()).toBe(4);
    const stored = await emu.api<{ value: number }>("/projects/counter/store/hits");
    expect(stored.value).toBe(4);
  });

  it("fan-out (AutoKitteh spelling): children signal their squares to the parent", async () => {
    const dir = join(EXAMPLES, "fan-out");
    const files = folderFiles(dir);
    const manifest = Buffer.from(files["autokitteh.yaml"]!, "base64").toString();
    delete files["autokitteh.yaml"];
    await emu.api("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    const { triggers } = await emu.api<{ triggers: { webhook_path: string }[] }>(
      "/triggers?project=fan_out",
    );
    const res = await post(
      emu.url + triggers[0]!.webhook_path,
      JSON.stringify({ items: [1, 2, 3, 4] }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ children: 4, total: 30 });
    const { sessions } = await emu.api<{
      sessions: { id: string; parent_id?: string; outcome_value?: unknown; durable: boolean }[];
    }>("/sessions?project=fan_out");
    const parent = sessions.find((s) => !s.parent_id)!;
    expect(parent.durable).toBe(true); // v1
    expect(sessions.filter((s) => s.parent_id === parent.id)).toHaveLength(4);
    expect(await emu.prints(parent.id)).toEqual(["4 children, total of squares 30"]);
  });

  it("scheduled: the heartbeat fires on its own, and says when its slot was due", async () => {
    const urls = await emu.deploy(join(EXAMPLES, "scheduled"));
    expect(urls).toEqual({ heartbeat: emu.url, weekday_report: emu.url }); // no webhook paths
    const { triggers } = await emu.api<{ triggers: { name: string; next_fire: string }[] }>(
      "/triggers?project=scheduled",
    );
    const report = triggers.find((t) => t.name === "weekday_report")!;
    // 09:00 in Paris is 08:00 or 07:00 UTC, by the season.
    expect(report.next_fire).toMatch(/T0[78]:00:00\.000Z$/);
    let sessions: { id: string; trigger_name: string }[] = [];
    await until("the heartbeat's first firing", async () => {
      ({ sessions } = await emu.api<{ sessions: typeof sessions }>("/sessions?project=scheduled"));
      return sessions.length > 0;
    });
    expect(sessions.map((s) => s.trigger_name)).toEqual(["heartbeat"]);
    expect((await emu.ended(sessions[0]!.id)).state).toBe("completed");
    // "on time" or "late" by this machine's wall clock (late past LATE_AFTER_SECONDS): that a
    // slot fires when it is due is proven on a hand-driven clock (src/schedules/scheduler.test.ts
    // "fires each slot on time"); a bound here would measure this machine's load.
    expect(await emu.prints(sessions[0]!.id)).toEqual([
      expect.stringMatching(/^heartbeat due \d{4}-\d\d-\d\dT\d\d:\d\d:\d0\.000Z: (on time|late)$/),
    ]);
  });
});
