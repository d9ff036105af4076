import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { stepsRunTwice, traceOf, watchOwners } from "./support/scale.ts";

/**
 * Async sessions are shared work: every webhook reaches A, yet B runs some of them, each session
 * runs once (one `running`, its journal's steps each run once) and only one instance owns it
 * (its owner row in PostgreSQL) while it runs.
 */
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the shared-work suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const SESSIONS = 24;

describe.skipIf(!enabled)("async sessions on a shared queue", () => {
  // Two slots each: A alone would run them two at a time while B idled. No instance dies here,
  // so the lease is long enough that a starved event loop on a busy machine still beats in
  // time (an instance declared dead loses its sessions, which this test counts as two owners).
  const a = useEmulator({ storage, redisUrl, leaseMs: 6000, maxSessions: 2 });
  const b = useEmulator({ storage, redisUrl, leaseMs: 6000, maxSessions: 2 });
  const work = mkdtempSync(join(tmpdir(), "hookline-shared-work-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("are taken by whichever instance has a free slot, each run once by one owner", async () => {
    const urls = await a.deploy(join(import.meta.dirname, "fixtures", "scale"));
    await a.api("/envs/scale_rules/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const watch = watchOwners(storage);
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const res = await fetch(urls.work!, { method: "POST", body: String(i) });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { session_id: string }).session_id);
    }
    const ended = await Promise.all(ids.map((id) => a.ended(id)));
    const owners = await watch.stop();
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
    // Seen by the owner watch: never two owners for one session; both instances took work.
    const seen = ids.filter((id) => owners.has(id));
    expect(seen.length, "sessions the owner watch saw").toBeGreaterThan(SESSIONS / 2);
    for (const id of seen) {
      const rec = ended.find((r) => r.id === id)!;
      const at = (ms: number) => `${ms - Date.parse(rec.created_at)} ms`;
      const held = [...owners.get(id)!].map(([owner, first]) => `${owner} from ${at(first)}`);
      const log = traces.find((t) => t.session.id === id)!.entries;
      const end = Date.parse(rec.ended_at!);
      const why = `${id} owned by ${held.join(", ")}; ended at ${at(end)}; ${JSON.stringify(log)}`;
      // One owner: the end's write removes the owner row, so nobody owns it after.
      expect(owners.get(id)!.size, why).toBe(1);
    }
    const instances = new Set(seen.flatMap((id) => [...owners.get(id)!.keys()]));
    expect([...instances], "instances seen owning sessions").toHaveLength(2);
  }, 120_000);
});
