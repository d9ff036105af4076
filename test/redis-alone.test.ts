// Redis as the only store serves one instance (CONTRACT.md, "Scale-out"): a second instance on
// the same Redis store is refused at start in one line that names `cli storage copy`; a restart
// right after kill -9 starts (the mark went with the dead process's connection); and the move
// that line names works: the store copied into PostgreSQL, a durable session parked in
// next_event on Redis resumes on a fleet of two on PostgreSQL (Redis the bus) and completes.
// Real service processes, real Python, real Redis and PostgreSQL.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Fleet } from "./support/fleet.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoPostgres } from "./support/postgres.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";
import { redisTestUrl, warnIfNoRedis } from "./support/redis.ts";
import { until } from "./support/until.ts";

const what = "the Redis-alone refusal and the move to PostgreSQL";
const enabled = warnIfNoRedis(what) && warnIfNoPostgres(what);
const TOKEN = "redis-alone-token";
const KEY = "00".repeat(32);
process.env.SVC_SECRET_KEY = KEY;
const auth = { authorization: `Bearer ${TOKEN}` };

const MANIFEST = `version: v2
project:
  name: parked
triggers:
  - name: start
    type: webhook
    call: handlers.py:waiter
    is_durable: true
  - name: go
    type: webhook
`;
const HANDLERS = `import workflow_sdk


@workflow_sdk.activity
def fetch(n):
    return f"fetched-{n}"


def waiter(event):
    first = fetch(1)
    sub = workflow_sdk.subscribe("go")
    print("waiting for go")
    got = workflow_sdk.next_event(sub)
    print(f"resumed: {first} {got.data.body.text}")
`;

type Log = { session: { state: string }; entries: { kind: string; text?: string }[] };
const logOf = async (url: string, id: string) =>
  (await (await fetch(`${url}/api/v1/sessions/${id}/log`, { headers: auth })).json()) as Log;
const said = (log: Log, kind: string, text: string) =>
  log.entries.filter((e) => e.kind === kind && e.text?.trimEnd() === text).length;

describe.skipIf(!enabled)("Redis as the only store", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-redis-alone-"));
  const project = join(home, "project");
  const storage = enabled ? redisTestUrl() : "memory:";
  let python = "";
  const fleets: Fleet[] = [];
  const fleetOf = async (count: number, env: Record<string, string>) => {
    const fleet = new Fleet({
      ...env,
      SVC_SECRET_KEY: KEY,
      SVC_API_TOKEN: TOKEN,
      SVC_WORKER_PYTHON: python,
    });
    fleets.push(fleet);
    await fleet.start(count);
    return fleet;
  };

  beforeAll(async () => {
    python = await testPython();
    mkdirSync(project);
    writeFileSync(join(project, "manifest.yaml"), MANIFEST);
    writeFileSync(join(project, "handlers.py"), HANDLERS);
  }, 120_000);
  afterAll(async () => {
    for (const fleet of fleets) await fleet.dispose();
    await dropPostgresTestTables();
    rmSync(home, { recursive: true, force: true });
  }, 30_000);

  it("serves one instance, refuses a second in one line naming the move, and restarts right after kill -9; the store moved to PostgreSQL resumes its parked session on a fleet", async () => {
    const alone = await fleetOf(1, { SVC_STORAGE: storage });
    const hooks = await alone.deploy(project, TOKEN);
    const res = await fetch(alone.url + hooks.start, { method: "POST" });
    expect(res.status).toBe(202);
    const { session_id: id } = (await res.json()) as { session_id: string };
    // Parked: its process given up while it waits. Killed before that, a resume runs the print
    // after its last journaled step again, as live code (the contract's replay ends there).
    await until("the session to park in next_event", async () => {
      const printed = said(await logOf(alone.url, id), "print", "waiting for go") === 1;
      const metrics = await (await fetch(`${alone.url}/metrics`, { headers: auth })).text();
      return printed && /^hookline_sessions_parked 1$/m.test(metrics);
    });

    // A second instance on the same Redis store: refused, in one line, before it reads a thing.
    const refused = startQuietEmulator(python, { storage });
    await expect(refused).rejects.toThrow(
      /^SVC_STORAGE: another instance is using this Redis store \(base "[^"]+"\); Redis as the only store serves one instance: to run several, move the data to PostgreSQL with `cli storage copy --from <this SVC_STORAGE> --to postgres:\/\/…`/,
    );

    // kill -9, and started again at once: its mark went with its connection.
    alone.kill(0);
    const restarted = Date.now();
    await alone.restart(0);
    expect(Date.now() - restarted, "a restart right after kill -9 starts").toBeLessThan(30_000);
    await until("the parked session resumed by the restarted instance", async () => {
      const log = await logOf(alone.url, id);
      return (
        log.session.state === "running" &&
        said(log, "warning", "owner stopped; resuming here") === 1
      );
    });

    // The move: the instance stopped, the store copied into PostgreSQL with the one command.
    await alone.terminate(0);
    const pg = postgresTestUrl();
    const copy = await execa(
      "node",
      [join(repoRoot, "bin/cli.mjs"), "storage", "copy", "--from", storage, "--to", pg],
      { reject: false },
    );
    expect(copy.stderr).toBe("");
    expect(copy.stdout).toMatch(/^copied: \d+ keys \(storage format \d+\)/);
    expect(copy.exitCode).toBe(0);

    const fleet = await fleetOf(2, { SVC_STORAGE: pg, SVC_REDIS_URL: redisTestUrl() });
    await until("the parked session taken up on the fleet", async () => {
      const log = await logOf(fleet.url, id);
      return said(log, "warning", "owner stopped; resuming here") === 2;
    });
    const go = await fetch(fleet.url + hooks.go, { method: "POST", body: "go-now" });
    expect(go.status).toBe(202);
    const ended = await until("the session to end", async () => {
      const log = await logOf(fleet.url, id);
      return log.session.state !== "running" && log;
    });
    expect(ended.session.state).toBe("completed");
    const prints = ended.entries.filter((e) => e.kind === "print").map((e) => e.text?.trimEnd());
    expect(prints).toEqual(["waiting for go", "resumed: fetched-1 go-now"]);
  }, 300_000);
});
