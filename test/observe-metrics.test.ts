// `/metrics` of the real service (`cli up --mode prod` as a process, real Python): behind the
// API token, accepted by Debian's real `promtool check metrics`, and scraped by a real
// Prometheus server that this test starts (loopback, random port, its own storage). After a
// scripted mix of sessions, some failing, Prometheus's own query for failed sessions by trigger
// gives the right counts.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "observe");
const CLI = join(repoRoot, "bin/cli.mjs");
const TOKEN = "metrics-test-token-0123456789";
const PROMTOOL = "/usr/bin/promtool";
const PROMETHEUS = "/usr/bin/prometheus";

// CI must run these (.ci/run installs Debian's prometheus package); a developer machine may skip.
const required = Boolean(process.env.CI) || process.env.HOOKLINE_PROMETHEUS_TESTS === "required";
const present = existsSync(PROMTOOL) && existsSync(PROMETHEUS);
if (!present) {
  const why = `${PROMTOOL} or ${PROMETHEUS} is missing: install them with "apt-get install -y prometheus"`;
  if (required) throw new Error(`the metrics tests must run here, but ${why}`);
  console.warn(`\n*** SKIPPING the Prometheus metrics tests: ${why} ***\n`);
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 90_000) {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${String(last ?? "")})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!present)("/metrics with promtool and a real Prometheus", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-metrics-"));
  const auth = { authorization: `Bearer ${TOKEN}` };
  let service: ResultPromise | null = null;
  let prometheus: ResultPromise | null = null;
  let url = "";
  let port = 0;
  let hooks: Record<string, string> = {};

  beforeAll(async () => {
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    service = execa(CLI, ["up", "--mode", "prod", "--port", String(port)], {
      env: {
        XDG_DATA_HOME: join(home, "data"),
        XDG_CONFIG_HOME: join(home, "config"),
        SVC_WORKER_PYTHON: await testPython(),
        SVC_API_TOKEN: TOKEN,
        // A reused process runs two sessions, then ends (the last test).
        SVC_REUSE_SESSIONS: "2",
      },
      reject: false,
      all: true,
    });
    await waitHealthy(url, 120_000);
    const res = await deployFolder(url, FIXTURE, auth);
    expect(res.status, await res.clone().text()).toBe(200);
    const { project_id } = (await res.json()) as { project_id: string };
    const list = await fetch(`${url}/api/v1/triggers?project=${project_id}`, { headers: auth });
    const { triggers } = (await list.json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    hooks = Object.fromEntries(triggers.map((t) => [t.name, url + t.webhook_path]));
  }, 240_000);

  afterAll(async () => {
    prometheus?.kill("SIGTERM");
    service?.kill("SIGTERM");
    await Promise.all([prometheus?.catch(() => {}), service?.catch(() => {})]);
    rmSync(home, { recursive: true, force: true });
  });

  it("needs the API token outside dev mode", async () => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const bad = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer nope" } });
    expect(bad.status).toBe(401);
  });

  it("passes promtool check metrics, with bounded labels", async () => {
    await fetch(hooks.ok!, { method: "POST", body: "{}" });
    const res = await fetch(`${url}/metrics`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const name of [
      "hookline_sessions_started_total",
      "hookline_queue_depth",
      "hookline_admission_limit",
      "hookline_python_warm_servers",
      "hookline_python_spare_processes",
      "hookline_python_idle_reused_processes",
      "hookline_python_reuse_sessions_total",
      "hookline_storage_operation_seconds_bucket",
    ]) {
      expect(text).toContain(name);
    }
    expect(text).toMatch(/^hookline_admission_limit 32$/m);
    const check = await execa(PROMTOOL, ["check", "metrics"], { input: text, reject: false });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    // No session, event or webhook id is a label value.
    expect(text).not.toMatch(/(ses|evt)_[a-z0-9]{26}/);
    expect(text).not.toContain(hooks.ok!.split("/webhooks/")[1]!);
  });

  it("is scraped by Prometheus, whose query counts failed sessions by trigger", async () => {
    const promPort = await freePort();
    const dir = join(home, "prometheus");
    const config = join(home, "prometheus.yml");
    writeFileSync(
      config,
      [
        "global: { scrape_interval: 1s, evaluation_interval: 1s }",
        "scrape_configs:",
        "  - job_name: hookline",
        "    scrape_interval: 1s",
        `    authorization: { type: Bearer, credentials: ${TOKEN} }`,
        `    static_configs: [{ targets: ["127.0.0.1:${port}"] }]`,
        "",
      ].join("\n"),
    );
    prometheus = execa(
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${dir}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { reject: false, all: true },
    );
    const prom = `http://127.0.0.1:${promPort}`;
    await until("Prometheus to be ready", async () => (await fetch(`${prom}/-/ready`)).ok);

    // The scripted mix: 3 async failures, 1 sync failure (502), 2 that complete.
    const fire = (name: string) => fetch(hooks[name]!, { method: "POST", body: "{}" });
    const answers = await Promise.all([
      fire("boom"),
      fire("boom"),
      fire("ok"),
      fire("boom"),
      fire("sync_boom"),
      fire("ok"),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 202, 202, 202, 502]);
    const query = async (q: string) => {
      const res = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = (await res.json()) as {
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      return Object.fromEntries(
        body.data.result.map((r) => [r.metric.trigger ?? "", Number(r.value[1])]),
      );
    };
    const failed = await until("Prometheus to see every failure", async () => {
      const got = await query('sum by (trigger) (hookline_sessions_ended_total{state="error"})');
      return got.boom === 3 && got.sync_boom === 1 ? got : false;
    });
    expect(failed).toEqual({ boom: 3, sync_boom: 1 });
    // The earlier test's session and these two: all completed under "ok".
    const completed = await until("the completed ones", async () => {
      const got = await query(
        'sum by (trigger) (hookline_sessions_ended_total{state="completed"})',
      );
      return got.ok === 3 ? got : false;
    });
    expect(completed).toEqual({ ok: 3 });
    const statuses = await query(
      'sum by (trigger) (label_replace(hookline_webhook_responses_total, "trigger", "$1", "status", "(.*)"))',
    );
    expect(statuses).toEqual({ "202": 6, "502": 1 });
    const sync = await query("sum(hookline_sync_response_seconds_count)");
    expect(sync[""]).toBe(1);

    // Every query of the Grafana dashboard in docs/ runs on this Prometheus; the ones over
    // sessions and the queue find series.
    const dashboard = JSON.parse(
      readFileSync(join(repoRoot, "docs/grafana/hookline.json"), "utf8"),
    ) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const run = async (expr: string) => {
      const q = expr.replaceAll("$project", ".+").replaceAll("$__rate_interval", "1m");
      const res = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(q)}`);
      return {
        q,
        body: (await res.json()) as {
          status: string;
          error?: string;
          data?: { result: unknown[] };
        },
      };
    };
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        const { q, body } = await run(expr);
        expect(body.status, `${panel.title}: ${q}: ${body.error ?? ""}`).toBe("success");
        if (!/Sessions per minute|Queue depth/.test(panel.title)) continue;
        // A rate needs two samples of a series: a scrape or two after the first.
        await until(`${panel.title}: ${q} to find series`, async () => {
          const again = await run(expr);
          return again.body.data!.result.length > 0;
        });
      }
    }
  }, 150_000);

  it("shows idle reused processes, and counts reuse_process sessions by their process", async () => {
    // Each answer comes with the outcome, before the session's end: its process is idle again
    // only once the session has ended, so each request waits for the one before to end.
    const ended = async () => {
      const res = await fetch(`${url}/api/v1/sessions?project=observe&limit=100`, {
        headers: auth,
      });
      const { sessions } = (await res.json()) as {
        sessions: { trigger_name: string; ended_at: string | null }[];
      };
      return sessions.filter((s) => s.trigger_name === "reused").every((s) => s.ended_at);
    };
    const pids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(hooks.reused!, { method: "POST", body: "{}" });
      expect(res.status).toBe(200);
      pids.push(((await res.json()) as { pid: number }).pid);
      await until(`session ${i + 1} of "reused" to end`, ended);
    }
    // SVC_REUSE_SESSIONS=2: the first process ran two sessions and ended; the third is fresh.
    expect(pids[1]).toBe(pids[0]);
    expect(pids[2]).not.toBe(pids[0]);
    const text = await (await fetch(`${url}/metrics`, { headers: auth })).text();
    const sample = (series: string) =>
      text
        .split("\n")
        .find((l) => l.startsWith(`${series} `))
        ?.slice(series.length + 1);
    expect(sample("hookline_python_idle_reused_processes")).toBe("1");
    expect(sample('hookline_python_reuse_sessions_total{process="reused"}')).toBe("1");
    expect(sample('hookline_python_reuse_sessions_total{process="fresh"}')).toBe("2");
    const check = await execa(PROMTOOL, ["check", "metrics"], { input: text, reject: false });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
  }, 60_000);
});
