// One trace end to end: a webhook with a W3C traceparent, its session, the session's activity
// and outcome, and the call the Python handler makes with `workflow_sdk.trace_headers()`, all
// exported by the real service (`cli up` as a process, real Python) to an OTLP/HTTP receiver
// this test runs. Also: a child session's trace links to its parent's, and the JSON log line of
// a failed session carries its session and trace ids.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedSpan, startOtlpReceiver } from "./support/otlp.ts";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "observe");
const CLI = join(repoRoot, "bin/cli.mjs");

describe("tracing and JSON logs (cli up with OTEL_* and SVC_LOG_FORMAT=json)", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-trace-"));
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let service: ResultPromise | null = null;
  let user: Server;
  let userUrl = "";
  const received: string[] = []; // the traceparent of each call the handler made
  let url = "";
  let output = "";
  let hooks: Record<string, string> = {};

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    user = createServer((req, res) => {
      received.push(String(req.headers.traceparent ?? ""));
      res.end("pong");
    });
    await new Promise<void>((r) => user.listen(0, "127.0.0.1", r));
    userUrl = `http://127.0.0.1:${(user.address() as { port: number }).port}/call`;
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    service = execa(CLI, ["up", "--mode", "dev", "--port", String(port)], {
      env: {
        XDG_DATA_HOME: join(home, "data"),
        XDG_CONFIG_HOME: join(home, "config"),
        SVC_WORKER_PYTHON: await testPython(),
        SVC_LOG_FORMAT: "json",
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: "hookline-trace-test",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
      reject: false,
      all: true,
    });
    // The service's log goes to stderr (stdout has `cli up`'s own banner).
    service.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    await waitHealthy(url, 120_000);
    const res = await deployFolder(url, FIXTURE);
    expect(res.status, await res.clone().text()).toBe(200);
    const { project_id } = (await res.json()) as { project_id: string };
    const { triggers } = (await (
      await fetch(`${url}/api/v1/triggers?project=${project_id}`)
    ).json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    hooks = Object.fromEntries(triggers.map((t) => [t.name, url + t.webhook_path]));
  }, 240_000);

  afterAll(async () => {
    service?.kill("SIGTERM");
    await service?.catch(() => {});
    await otlp?.close();
    await new Promise((r) => user?.close(r));
    rmSync(home, { recursive: true, force: true });
  });

  const sessionSpan = (id: string) =>
    otlp.spans.find((s) => s.name === "session" && s.attributes["hookline.session.id"] === id);

  it("exports the request, the session, its activity, its outcome and the user's call as one tree", async () => {
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const res = await fetch(hooks.traced!, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
      body: JSON.stringify({ call: userUrl }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("pong");

    const session = await until("the session's span", () =>
      otlp.spans.find((s) => s.name === "session" && s.attributes["hookline.trigger"] === "traced"),
    );
    const request = otlp.spans.find((s) => s.kind === 2 && s.traceId === traceId)!;
    expect(request, "the request's span").toBeDefined();
    expect(request.name).toBe("POST /webhooks/:id");
    expect(request.parentSpanId).toBe(callerSpan);
    expect(request.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/webhooks/:id",
      "http.response.status_code": 200,
    });
    // The webhook's id is a secret capability: no attribute carries the real path.
    expect(JSON.stringify(request.attributes)).not.toContain(hooks.traced!.split("/webhooks/")[1]!);
    expect(request.resource["service.name"]).toBe("hookline-trace-test");
    // waitHealthy polled /healthz: probes and scrapes make no spans.
    expect(otlp.spans.filter((s) => /\/(healthz|readyz|metrics)$/.test(s.name))).toEqual([]);

    expect(session.traceId).toBe(traceId);
    expect(session.parentSpanId).toBe(request.spanId);
    expect(session.attributes).toMatchObject({
      "hookline.project": "observe",
      "hookline.trigger": "traced",
      "hookline.session.durable": false,
      "hookline.session.state": "completed",
    });
    const sessionId = String(session.attributes["hookline.session.id"]);
    expect(sessionId).toMatch(/^ses_/);

    const children = (name: (s: ReceivedSpan) => boolean) =>
      otlp.spans.filter((s) => s.parentSpanId === session.spanId && name(s));
    const [activity] = await until("the activity's span", () => {
      const found = children((s) => s.name.startsWith("activity ") && s.name.includes("call"));
      return found.length ? found : false;
    });
    expect(activity!.traceId).toBe(traceId);
    expect(activity!.endNs).toBeGreaterThan(activity!.startNs);
    const [outcome] = children((s) => s.name === "outcome");
    expect(outcome?.attributes["http.response.status_code"]).toBe(200);

    // The handler's own outgoing call carried the session's span as its parent.
    expect(received).toEqual([`00-${traceId}-${session.spanId}-01`]);

    // The record keeps the trace: the API (hence the UI and the CLI) can show it.
    const { session: record } = (await (
      await fetch(`${url}/api/v1/sessions/${sessionId}`)
    ).json()) as {
      session: { traceparent?: string };
    };
    expect(record.traceparent).toBe(`00-${traceId}-${session.spanId}-01`);
    const log = await execa(CLI, ["session", "log", sessionId], {
      env: { SVC_URL: url },
      reject: false,
    });
    expect(log.stdout).toContain(`trace ${traceId}`);
    const page = await (await fetch(`${url}/ui/sessions/${sessionId}`)).text();
    expect(page).toMatch(new RegExp(`id="trace-id"[^>]*>${traceId}<`));
  });

  it("traces a durable session's journaled step and its wait for an event", async () => {
    const res = await fetch(hooks.durable!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ call: userUrl }),
    });
    const { session_id: id } = (await res.json()) as { session_id: string };
    const session = await until("the durable session's span", () => sessionSpan(id));
    expect(session.attributes["hookline.session.durable"]).toBe(true);
    const under = otlp.spans.filter((s) => s.parentSpanId === session.spanId).map((s) => s.name);
    expect(under).toEqual(expect.arrayContaining(["step subscribe", "wait next_event"]));
    expect(under.some((n) => n.startsWith("step activity ") && n.includes("call"))).toBe(true);
    expect(under.some((n) => n.startsWith("activity ") && n.includes("call"))).toBe(true);
    const wait = otlp.spans.find(
      (s) => s.parentSpanId === session.spanId && s.name === "wait next_event",
    )!;
    // It waited its 0.2 s timeout.
    expect(Number(wait.endNs - wait.startNs) / 1e6).toBeGreaterThanOrEqual(150);
  });

  it("links a child session's trace to its parent's", async () => {
    const res = await fetch(hooks.parent!, { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    const { session_id: parentId } = (await res.json()) as { session_id: string };
    const parent = await until("the parent's span", () => sessionSpan(parentId));
    const child = await until("the child's span", () =>
      otlp.spans.find(
        (s) => s.name === "session" && s.attributes["hookline.session.parent_id"] === parentId,
      ),
    );
    expect(child.traceId).not.toBe(parent.traceId);
    expect(child.links).toEqual([{ traceId: parent.traceId, spanId: parent.spanId }]);
    // The child's failure is logged with the child's own trace, not the request's that
    // started its parent (the line is written while that request's context is still about).
    const childId = String(child.attributes["hookline.session.id"]);
    const line = await until("the child's log line", () =>
      output
        .split("\n")
        .filter((l) => l.includes(childId))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.level === "warn"),
    );
    expect(line).toMatchObject({
      session_id: childId,
      trace_id: child.traceId,
      span_id: child.spanId,
    });
  });

  it("logs a failed session as JSON with its session and trace ids", async () => {
    const res = await fetch(hooks.boom!, { method: "POST", body: "{}" });
    const { session_id: id } = (await res.json()) as { session_id: string };
    const span = await until("the failed session's span", () => sessionSpan(id));
    expect(span.status.code).toBe(2); // ERROR
    const line = await until("its log line", () =>
      output
        .split("\n")
        .filter((l) => l.includes(id))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.level === "warn"),
    );
    expect(line).toMatchObject({
      session_id: id,
      project: "observe",
      trigger: "boom",
      trace_id: span.traceId,
      span_id: span.spanId,
    });
    expect(typeof line.time).toBe("string");
    expect(line.message).toBe(`session ${id} ended in error`);
    // Every line of the service's log is one JSON object with time, level and message.
    expect(output.trim()).not.toBe("");
    for (const l of output.split("\n").filter((x) => x.trim())) {
      const parsed = JSON.parse(l) as Record<string, unknown>;
      expect(Object.keys(parsed).slice(0, 3)).toEqual(["time", "level", "message"]);
    }
  });
});
