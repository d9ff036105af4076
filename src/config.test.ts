import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSettings, type Settings } from "./config.ts";

describe("the settings of reused processes (SVC_REUSE_*)", () => {
  it("default to 1,000 sessions a process, 60 s idle, and SVC_MAX_SESSIONS idle", () => {
    const d = resolveSettings({}, {});
    expect([d.reuseSessions, d.reuseIdleMs, d.reusePool]).toEqual([1000, 60_000, 32]);
    expect(resolveSettings({}, { SVC_MAX_SESSIONS: "8" }).reusePool).toBe(8);
  });

  it("read SVC_REUSE_SESSIONS, SVC_REUSE_IDLE in seconds and SVC_REUSE_POOL", () => {
    const s = resolveSettings(
      {},
      {
        SVC_REUSE_SESSIONS: "2",
        SVC_REUSE_IDLE: "0.5",
        SVC_REUSE_POOL: "0",
        SVC_MAX_SESSIONS: "8",
      },
    );
    expect([s.reuseSessions, s.reuseIdleMs, s.reusePool]).toEqual([2, 500, 0]);
    // Flags win over variables, as for every setting.
    expect(resolveSettings({ reuseSessions: 5 }, { SVC_REUSE_SESSIONS: "2" }).reuseSessions).toBe(
      5,
    );
  });

  it("refuse a bad value in one line naming the variable", () => {
    const refused = (env: Record<string, string>) => {
      try {
        resolveSettings({}, env);
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(refused({ SVC_REUSE_SESSIONS: "0" })).toBe(
      'SVC_REUSE_SESSIONS: expected a whole number of at least 1, got "0"',
    );
    expect(refused({ SVC_REUSE_SESSIONS: "1.5" })).toMatch(/^SVC_REUSE_SESSIONS: /);
    expect(refused({ SVC_REUSE_IDLE: "soon" })).toBe(
      'SVC_REUSE_IDLE: expected seconds of at most 2147483, got "soon"',
    );
    expect(refused({ SVC_REUSE_IDLE: "0" })).toMatch(/^SVC_REUSE_IDLE: /);
    // Past what a Node timer can wait, the process would end at once: refused instead.
    expect(refused({ SVC_REUSE_IDLE: "3000000" })).toMatch(/^SVC_REUSE_IDLE: /);
    expect(refused({ SVC_REUSE_POOL: "-1" })).toBe(
      'SVC_REUSE_POOL: expected a whole number, got "-1"',
    );
  });
});

describe("every SVC_* variable docs/configuration.md lists", () => {
  // The variable, a valid value other than its default, and what it must set. A setting passed as
  // a flag in the tests would hide a variable that is never read: this goes through the variable.
  const readHere: Record<string, [string, Partial<Settings>]> = {
    SVC_PORT: ["8123", { port: 8123 }],
    SVC_HOST: ["127.0.0.2", { host: "127.0.0.2" }],
    SVC_MODE: ["prod", { mode: "prod" }],
    SVC_STORAGE: ["memory:", { storage: "memory:" }],
    SVC_REDIS_URL: ["redis://r.example:6390", { redisUrl: "redis://r.example:6390" }],
    SVC_API_TOKEN: ["t0ken", { apiToken: "t0ken" }],
    SVC_WORKER_PYTHON: ["/opt/py/bin/python3", { workerPython: "/opt/py/bin/python3" }],
    SVC_MAX_BODY: ["2048", { maxBody: 2048 }],
    SVC_SYNC_TIMEOUT: ["7", { syncTimeoutMs: 7000 }],
    SVC_WORKFLOW_TIMEOUT: ["3", { workflowTimeoutMs: 3000 }],
    SVC_MAX_SESSIONS: ["5", { maxSessions: 5 }],
    SVC_MAX_QUEUED: ["9", { maxQueued: 9 }],
    SVC_LEASE: ["4", { leaseMs: 4000 }],
    SVC_RETAIN_SESSIONS: ["11", { retainSessions: 11 }],
    SVC_RETAIN_EVENTS: ["12", { retainEvents: 12 }],
    SVC_HEADERS_TIMEOUT: ["2", { headersTimeoutMs: 2000 }],
    SVC_REQUEST_TIMEOUT: ["13", { requestTimeoutMs: 13_000 }],
    SVC_BODY_TIMEOUT: ["14", { bodyTimeoutMs: 14_000 }],
    SVC_MAX_CONNECTIONS: ["15", { maxConnections: 15 }],
    SVC_DEDUP_WINDOW: ["16", { dedupWindowMs: 16_000 }],
    SVC_EVICT_AFTER: ["never", { evictAfterMs: -1 }],
    SVC_PUBLIC_URL: ["https://hooks.example.com/", { publicUrl: "https://hooks.example.com" }],
    SVC_SESSION_MEMORY: ["256", { sessionMemoryMib: 256 }],
    SVC_SESSION_FILES: ["17", { sessionFiles: 17 }],
    SVC_SESSION_CPU: ["18", { sessionCpuSeconds: 18 }],
    SVC_SESSION_PROCESSES: ["19", { sessionProcesses: 19 }],
    SVC_SESSION_PRIORITY: ["idle", { sessionPriority: "idle" }],
    SVC_REUSE_SESSIONS: ["20", { reuseSessions: 20 }],
    SVC_REUSE_IDLE: ["21", { reuseIdleMs: 21_000 }],
    SVC_REUSE_POOL: ["22", { reusePool: 22 }],
    SVC_DRAIN: ["23", { drainMs: 23_000 }],
    SVC_LOG_FORMAT: ["json", { logFormat: "json" }],
    SVC_FRONT_THREAD: ["off", { frontThread: false }],
    SVC_BURST_YIELD: ["0.25", { burstYieldMs: 250 }],
  };
  // Read by other parts: the CLI (SVC_URL), the key (src/secrets.ts), the venv, tracing.
  const readElsewhere = ["SVC_URL", "SVC_SECRET_KEY", "SVC_PREINSTALL", "SVC_TRACE_STORAGE_MS"];
  // The container's entry (src/platform/container.ts): packages baked into the image.
  readElsewhere.push("SVC_PREINSTALL_BAKED");
  // The service's own GitHub App, read when a connection to it needs it (connections/github-app.ts).
  readElsewhere.push("SVC_GITHUB_APP_ID", "SVC_GITHUB_PRIVATE_KEY", "SVC_GITHUB_WEBHOOK_SECRET");
  // The Atlassian API of the jira OAuth webhooks (src/connections/jira-atlassian.ts).
  readElsewhere.push("SVC_OAUTH_JIRA_API_URL");
  // The App's install page, for a github connection's browser (src/connections/github-install.ts).
  readElsewhere.push("SVC_GITHUB_APP_NAME", "SVC_OAUTH_GITHUB_WEB_URL");
  // Google's API root (src/connections/google-api.ts) and its Pub/Sub pushes' checks and
  // topics (src/platform/connection-keepers.ts).
  readElsewhere.push("SVC_GOOGLE_API_URL", "SVC_GOOGLE_JWKS_URL", "SVC_GOOGLE_PUBSUB_AUDIENCE");
  readElsewhere.push("SVC_GOOGLE_PUBSUB_SERVICE_ACCOUNT");

  it("is read by resolveSettings (or named as read elsewhere)", () => {
    const doc = readFileSync(join(import.meta.dirname, "..", "docs", "configuration.md"), "utf8");
    const listed = [...doc.matchAll(/^\| `(SVC_[A-Z_]+)` \|/gm)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(30);
    expect(listed.filter((name) => !(name in readHere) && !readElsewhere.includes(name))).toEqual(
      [],
    );
  });

  it("refuses a front thread that is neither on nor off, naming it", () => {
    expect(() => resolveSettings({}, { SVC_FRONT_THREAD: "yes" })).toThrow(
      'SVC_FRONT_THREAD: expected on or off, got "yes"',
    );
    expect(resolveSettings({}, { SVC_FRONT_THREAD: "on" }).frontThread).toBe(true);
  });

  it("takes 0 for no burst yield, and refuses one past a minute, naming it", () => {
    expect(resolveSettings({}, { SVC_BURST_YIELD: "0" }).burstYieldMs).toBe(0);
    expect(() => resolveSettings({}, { SVC_BURST_YIELD: "61" })).toThrow(
      'SVC_BURST_YIELD: expected seconds of at most 60, got "61"',
    );
  });

  it.each(Object.entries(readHere))("%s sets its setting", (name, [value, wanted]) => {
    const [key] = Object.keys(wanted) as (keyof Settings)[];
    const fallback = resolveSettings({}, {})[key!];
    expect(wanted[key!], `${value} is ${name}'s default: pick another`).not.toEqual(fallback);
    expect(resolveSettings({}, { [name]: value }), `${name}=${value}`).toMatchObject(wanted);
  });
});
