import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { postgresTarget } from "../../src/storage/drivers/postgres.ts";

/** What one session left: its record, its log entries and its journal. */
export interface SessionTrace {
  session: { id: string; state: string; error?: { message?: string } | null; trigger_name: string };
  entries: { kind: string; state?: string; text?: string; function?: string; event_id?: string }[];
  journal: { seq: number; kind: string; function?: string; result?: string }[];
}

/**
 * The session's trace through the API of `url`.
 * @example const { session, journal } = await traceOf(emu.url, id);
 */
export async function traceOf(url: string, id: string, token?: string): Promise<SessionTrace> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await fetch(`${url}/api/v1/sessions/${id}/log`, { headers });
  if (!res.ok) throw new Error(`log of ${id}: ${res.status} ${await res.text()}`);
  return (await res.json()) as SessionTrace;
}

/**
 * Journal steps that ran again after they were journaled: for each journaled activity step
 * (its result is the token its run wrote to `runs.txt`), a later run of the same step.
 * @example expect(stepsRunTwice(workdir, traces)).toEqual([]);
 */
export function stepsRunTwice(workdir: string, traces: SessionTrace[]): string[] {
  const runs = readFileSync(join(workdir, "runs.txt"), "utf8").trim().split("\n");
  const bySession = new Map<string, string[]>();
  for (const line of runs) {
    const [ses, name, token] = line.split(" ");
    const list = bySession.get(`${ses} ${name}`) ?? [];
    list.push(token!);
    bySession.set(`${ses} ${name}`, list);
  }
  const out: string[] = [];
  for (const t of traces) {
    for (const step of t.journal) {
      if (step.kind !== "activity" || !step.result) continue;
      for (const [key, tokens] of bySession) {
        if (!key.startsWith(`${t.session.id} `)) continue;
        const at = tokens.findIndex((tok) => step.result!.includes(tok));
        if (at >= 0 && at < tokens.length - 1) out.push(`${key} (journal step ${step.seq})`);
      }
    }
    const seqs = t.journal.map((s) => s.seq);
    if (new Set(seqs).size !== seqs.length) out.push(`${t.session.id}: a journal seq twice`);
  }
  return out;
}

/**
 * Watches a fleet's owner rows (PostgreSQL, `<table>_owners`) every `everyMs`: for each session,
 * the instances seen owning it, each with when it was first seen (epoch ms). `stop()` ends the
 * watch and returns them.
 * @example const watch = watchOwners(storageUrl); … const owners = await watch.stop();
 */
export function watchOwners(storageUrl: string, everyMs = 20) {
  const { url, table } = postgresTarget(storageUrl)!;
  const db = new pg.Client({ connectionString: url });
  const owners = new Map<string, Map<string, number>>();
  let stopped = false;
  const loop = (async () => {
    await db.connect();
    while (!stopped) {
      const r = await db.query(
        `SELECT session_id, owner FROM ${table}_owners WHERE owner IS NOT NULL`,
      );
      for (const { session_id: id, owner } of r.rows as { session_id: string; owner: string }[]) {
        const seen = owners.get(id) ?? new Map<string, number>();
        if (!seen.has(owner)) seen.set(owner, Date.now());
        owners.set(id, seen);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await db.end();
      return owners;
    },
  };
}
