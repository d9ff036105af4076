import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Fleet } from "./support/fleet.ts";
import { dropPostgresTestTables, postgresTestUrl, warnIfNoFleet } from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { redisTestUrl } from "./support/redis.ts";
import { until } from "./support/until.ts";

/**
 * A 20 MB activity result in a fleet (PostgreSQL the store, Redis the bus): the instance running
 * the session is SIGKILLed once the result is on record, another takes the session over and
 * replays it, reading the value's parts from PostgreSQL, without running the activity again.
 */

const FIXTURE = join(import.meta.dirname, "fixtures", "big_results");
const TOKEN = "big-results-token";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

/** The pids from `pid` up to the init process. */
function ancestors(pid: number): number[] {
  const chain: number[] = [];
  for (let p = pid; p > 1; ) {
    chain.push(p);
    const stat = readFileSync(`/proc/${p}/stat`, "utf8");
    p = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  }
  return chain;
}

describe.skipIf(!warnIfNoFleet("the big-results fleet test"))("a value apart in a fleet", () => {
  const work = mkdtempSync(join(tmpdir(), "hookline-big-fleet-"));
  let fleet: Fleet;
  let hooks: Record<string, string>;

  beforeAll(async () => {
    fleet = new Fleet({
      SVC_STORAGE: postgresTestUrl(),
      SVC_REDIS_URL: redisTestUrl(),
      SVC_SECRET_KEY: "00".repeat(32),
      SVC_API_TOKEN: TOKEN,
      SVC_WORKER_PYTHON: await testPython(),
      // Short, so the takeover after the kill comes soon; not so short that a loaded machine,
      // sealing the 20 MB value, misses heartbeats for it while the instance lives (at 2 s, CI
      // once saw `big` run twice, which a takeover before the kill explains).
      SVC_LEASE: "6",
    });
    await fleet.start(2);
    hooks = await fleet.deploy(FIXTURE, TOKEN);
    const res = await fetch(`${fleet.url}/api/v1/envs/big_results/vars/WORKDIR`, {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ value: work }),
    });
    expect(res.status, await res.text()).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await fleet?.dispose();
    await dropPostgresTestTables();
    rmSync(work, { recursive: true, force: true });
  });

  it("takes a session over after kill -9 and replays its 20 MB result from PostgreSQL", async () => {
    const res = await fetch(fleet.url + hooks.big, { method: "POST" });
    expect(res.status, await res.clone().text()).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    const pidFile = join(work, "pid");
    const pid = Number(
      await until(
        "the big result on record",
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8"),
      ),
    );
    const chain = ancestors(pid);
    const victim = fleet.instances.findIndex((i) => chain.includes(i.child!.pid!));
    expect(victim, "the session's instance").toBeGreaterThanOrEqual(0);
    fleet.kill(victim);
    writeFileSync(join(work, "go"), "");
    const session = await until(
      "the session to end on the other instance",
      async () => {
        const r = await fetch(`${fleet.url}/api/v1/sessions/${session_id}`, { headers: auth });
        if (!r.ok) return false;
        const { session } = (await r.json()) as {
          session: { state: string; error?: { message: string } };
        };
        return ["completed", "error", "stopped"].includes(session.state) && session;
      },
      90_000,
    );
    expect(session.error?.message).toBeUndefined();
    expect(session.state).toBe("completed");
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("big 20000000\n");
    const printed = await fetch(`${fleet.url}/api/v1/sessions/${session_id}/prints`, {
      headers: auth,
    });
    const { prints } = (await printed.json()) as { prints: { text: string }[] };
    expect(prints.map((p) => p.text)).toEqual([
      "got 20000000 bc01a03f3f505eaf 4950",
      "after the wait 20000000 bc01a03f3f505eaf 4950",
    ]);
  }, 180_000);
});
