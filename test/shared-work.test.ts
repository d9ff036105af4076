import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { REDIS_URL, redisTestUrl, warnIfNoRedis } from "./support/redis.ts";
import { stepsRunTwice, traceOf, watchLeases } from "./support/scale.ts";

/**
 * Async sessions are shared work: every webhook reaches A, yet B runs some of them, each session
 * runs once (one `running`, its journal's steps each run once) and only one instance holds its
 * lease while it runs.
 */
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoRedis("the shared-work suite");
const storage = REDIS_URL ? redisTestUrl() : "memory:";
const base = REDIS_URL ? new URL(storage).searchParams.get("base")! : "";
const SESSIONS = 24;

describe.skipIf(!enabled)("async sessions on a shared queue", () => {
  // Two slots each: A alone would run them two at a time while B idled. No instance dies here,
  // so the lease is long enough that a starved event loop on a busy machine still renews it in
  // time (a lapsed lease lets the other instance claim it, which this test counts as two holders).
  const a = useEmulator({ storage, leaseMs: 6000, maxSessions: 2 });
  const b = useEmulator({ storage, leaseMs: 6000, maxSessions: 2 });
  const work = mkdtempSync(join(tmpdir(), "hookline-shared-work-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("are taken by whichever instance has a free slot, each run once under one lease", async () => {
    const urls = await a.deploy(join(import.meta.dirname, "fixtures", "scale"));
    await a.api("/envs/scale_rules/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const leases = watchLeases(REDIS_URL!, base);
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const res = await fetch(urls.work!, { method: "POST", body: String(i) });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { session_id: string }).session_id);
    }
    const ended = await Promise.all(ids.map((id) => a.ended(id)));
    const owners = await leases.stop();
    expect(ended.map((r) => `${r.id} ${r.state} ${r.error?.message ?? ""}`)).toEqual(
      ids.map((id) => `${id} completed `),
    );
    const traces = await Promise.all(ids.map((id) => traceOf(b.url, id)));
    for (const t of traces) {
      const runs = t.entries.filter((e) => e.kind === "state" && e.state === "running");
      const why = JSON.stringify(t.entries.filter((e) => e.kind !== "print"));
      expect(runs, `${t.session.id} ${why}`).toHaveLength(1);
      expect(
        t.journal.filter((s) => s.kind === "activity"),
        JSON.stringify(t.journal),
      ).toHaveLength(2);
    }
    expect(stepsRunTwice(work, traces)).toEqual([]);
    // Seen by the lease watch: never two holders for one session; both instances took work.
    const seen = ids.filter((id) => owners.has(id));
    expect(seen.length, "sessions the lease watch saw").toBeGreaterThan(SESSIONS / 2);
    for (const id of seen) {
      const rec = ended.find((r) => r.id === id)!;
      const at = (ms: number) => `${ms - Date.parse(rec.created_at)} ms`;
      const held = [...owners.get(id)!].map(([owner, first]) => `${owner} from ${at(first)}`);
      const log = traces.find((t) => t.session.id === id)!.entries;
      const end = Date.parse(rec.ended_at!);
      const why = `${id} held by ${held.join(", ")}; ended at ${at(end)}; ${JSON.stringify(log)}`;
      // One holder while it ran. After its end, another instance's recovery sweep may still
      // claim a lease left behind, only to release it (src/sessions/recovery.ts, "tidy up").
      const whileRunning = [...owners.get(id)!.values()].filter((first) => first <= end);
      expect(whileRunning, why).toHaveLength(1);
    }
    const instances = new Set(seen.flatMap((id) => [...owners.get(id)!.keys()]));
    expect([...instances], "instances seen holding leases").toHaveLength(2);
  }, 120_000);
});
