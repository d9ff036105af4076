import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../test/support/app.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { until } from "../../test/support/until.ts";

const MANIFEST = `
version: v2
project:
  name: obs
triggers:
  - name: work
    type: webhook
    call: handlers.py:work
  - name: answer
    type: webhook
    call: handlers.py:answer
    is_sync: true
`;
const FILES = { "handlers.py": "def work(event):\n    pass\ndef answer(event):\n    pass\n" };

const PARKING = `
version: v2
project:
  name: park
triggers:
  - name: wait
    type: webhook
    call: handlers.py:wait
    is_durable: true
  - name: hold
    type: webhook
    call: handlers.py:wait
  - name: source
    type: webhook
`;
const PARKING_FILES = { "handlers.py": "def wait(event):\n    pass\n" };

/** The value of one sample line of a Prometheus text answer (0 when absent). */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("/metrics over the app (fake runtime)", () => {
  it("counts sessions, activities, steps, webhook answers and deduplicated deliveries", async () => {
    const fake = fakeRuntime({
      "handlers.py:work": async (_spec, wf) => {
        await wf.activity("fetch", () => 1);
        wf.print("done");
      },
      "handlers.py:answer": (_spec, wf) =>
        wf.outcome({ status_code: 201, headers: {}, body: null, more: false }),
    });
    const { fetch, hook } = await targets[0]!.make(fake.runtime);
    expect((await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES))).status).toBe(200);
    const { triggers } = (await (await fetch("/api/v1/triggers?project=obs")).json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    const path = (n: string) => triggers.find((t) => t.name === n)!.webhook_path;
    const key = { "Idempotency-Key": "delivery-1" };
    const first = await fetch(path("work"), { method: "POST", headers: key, body: "{}" });
    const again = await fetch(path("work"), { method: "POST", headers: key, body: "{}" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const { session_id } = (await first.json()) as { session_id: string };
    await hook.sessions.whenEnded(session_id);
    expect((await fetch(path("answer"), { method: "POST", body: "{}" })).status).toBe(201);

    const text = await (await fetch("/metrics")).text();
    const w = 'project="obs",trigger="work"';
    expect(sample(text, `hookline_sessions_started_total{${w}}`)).toBe(1);
    expect(sample(text, `hookline_sessions_ended_total{${w},state="completed"}`)).toBe(1);
    expect(sample(text, `hookline_session_duration_seconds_count{${w},state="completed"}`)).toBe(1);
    expect(sample(text, 'hookline_webhook_responses_total{status="202"}')).toBe(2);
    expect(sample(text, 'hookline_webhook_responses_total{status="201"}')).toBe(1);
    expect(sample(text, "hookline_webhook_deduplicated_total")).toBe(1);
    expect(
      sample(
        text,
        'hookline_sync_response_seconds_count{project="obs",trigger="answer",status="201"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'hookline_step_duration_seconds_count{project="obs",kind="outcome",result="ok"}',
      ),
    ).toBe(1);
    expect(text).toContain("hookline_storage_operation_seconds_count");
    expect(text).not.toContain("nodejs_active_handles_total");
    expect(text).toContain("process_cpu_user_seconds_total"); // Node's own, shared by the apps
    hook.metrics.connectionRefused("github", "bad_signature");
    const after = await (await fetch("/metrics")).text();
    expect(
      sample(
        after,
        'hookline_connection_refused_total{integration="github",reason="bad_signature"}',
      ),
    ).toBe(1);
    await hook.dispose();
  });

  it("counts a durable session parked while it waits without a process, and live apart from parked", async () => {
    const fake = fakeRuntime({
      "handlers.py:wait": async (_spec, wf) => {
        const id = await wf.subscribe("source", "");
        await wf.nextEvent([id], null);
      },
    });
    // A durable session waiting longer than evictAfterMs gives its process up: it is parked.
    const { fetch, hook } = await targets[0]!.make(fake.runtime, {
      limits: { sessions: { evictAfterMs: 50 } },
    });
    expect((await fetch("/api/v1/deploy", deployBody(PARKING, PARKING_FILES))).status).toBe(200);
    const { triggers } = (await (await fetch("/api/v1/triggers?project=park")).json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    const path = (n: string) => triggers.find((t) => t.name === n)!.webhook_path;
    const parked = async () =>
      sample(await (await fetch("/metrics")).text(), "hookline_sessions_parked");
    expect(await parked()).toBe(0);
    const started = await fetch(path("wait"), { method: "POST", body: "{}" });
    const { session_id } = (await started.json()) as { session_id: string };
    // A non-durable session waiting too: it keeps its process, live and never parked.
    const held = await fetch(path("hold"), { method: "POST", body: "{}" });
    const { session_id: heldId } = (await held.json()) as { session_id: string };
    await until("the session to be parked", async () => (await parked()) === 1, 20_000);
    expect(
      sample(await (await fetch("/metrics")).text(), "hookline_sessions_live"),
      "hookline_sessions_live counts both sessions alive (one of them parked), not the parked one",
    ).toBe(2);
    await fetch(path("source"), { method: "POST", body: "{}" });
    expect((await hook.sessions.whenEnded(session_id))?.state).toBe("completed");
    expect((await hook.sessions.whenEnded(heldId))?.state).toBe("completed");
    expect(await parked()).toBe(0);
    await hook.dispose();
  });

  it("needs the API token when one is set", async () => {
    const { fetch, hook } = await targets[0]!.make(fakeRuntime().runtime, {
      access: { apiToken: "t0ken" },
    });
    expect((await fetch("/metrics")).status).toBe(401);
    const ok = await fetch("/metrics", { headers: { authorization: "Bearer t0ken" } });
    expect(ok.status).toBe(200);
    await hook.dispose();
  });
});
