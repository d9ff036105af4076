import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { idAt } from "../../src/ids.ts";
import type { SessionRecord } from "../../src/model/records.ts";
import { BACKFILL_KEY } from "../../src/stats/backfill.ts";
import { createSessionStats } from "../../src/stats/session-stats.ts";
import { createStorageFromUrl } from "../../src/storage/driver.ts";
import { createStores } from "../../src/storage/records.ts";
import { type Bench, JSON_BODY } from "../context.ts";
import { type Service, startService } from "../service.ts";
import { summarize } from "../stats.ts";
import { row, targetRow } from "../table.ts";

/**
 * The README's configuration with few and with many stored sessions: the same figures read on a
 * service started on each store. Sessions are written straight to the data home's LMDB while no
 * service runs (as a long-lived service would have left them: records, index, per-minute counts),
 * spread over the last week, one in ten failed. Retention stays as the README's configuration
 * has it (10,000 ended sessions kept per project), so a store holds many sessions by holding
 * many projects: 0.9 % of them are the measured project's (9,000 of 1,000,000: under its
 * limit, as a service that pruned down to 90 % left it), the rest are spread over 100 others.
 * `BENCH_GROWTH=1000,1000000` sets the sizes (the first is the base of the ratios).
 */
const SIZES = (process.env.BENCH_GROWTH ?? "1000,1000000").split(",").map(Number);
const ENV = { SVC_EVICT_AFTER: "0.1" };
/** The share of the stored sessions that are the measured project's. */
const OURS = 0.009;
/** The other projects the rest are spread over. */
const OTHERS = 100;
const WEEK = 7 * 24 * 3_600_000;

interface Figures {
  accept: number;
  sync: number;
  list: number;
  listAll: number;
  rssMiB: number;
  fileMiB: number;
  seedS: number;
}

/**
 * `count` ended sessions, `OURS` of them `projectId`'s and the rest `OTHERS` other projects',
 * written in batches of 1,000 with their counts.
 */
export async function seed(dataHome: string, projectId: string, count: number): Promise<number> {
  const storage = createStorageFromUrl(`lmdb:${join(dataHome, "db")}`);
  const stores = createStores(storage);
  const stats = createSessionStats(storage, { flushMs: 60_000 });
  const t0 = performance.now();
  const now = Date.now() - 60_000;
  try {
    for (let i = 0; i < count; i += 1000) {
      const batch: { id: string; change: { record: SessionRecord; was: null; log: never[] } }[] =
        [];
      for (let j = i; j < Math.min(count, i + 1000); j++) {
        const when = now - WEEK + Math.floor((j / count) * WEEK);
        const id = `${idAt("ses", when).slice(0, -8)}${String(j).padStart(8, "0")}`;
        const t = new Date(when).toISOString();
        const failed = j % 10 === 0;
        const mine = j % Math.round(1 / OURS) === 0;
        const project = mine ? projectId : `prj_seeded${String(j % OTHERS).padStart(20, "0")}`;
        const record = {
          id,
          project_id: project,
          project_name: mine ? "trivial" : "seeded",
          deployment_id: "dep_seeded",
          build_id: "bld_seeded",
          trigger_id: "trg_seeded",
          trigger_name: "accept",
          event_id: `evt_${id.slice(4)}`,
          entry: "handlers.py:on_accept",
          durable: false,
          is_sync: false,
          state: failed ? "error" : "completed",
          error: failed ? { message: `seeded failure ${j}` } : null,
          attempts: 0,
          created_at: t,
          started_at: t,
          ended_at: new Date(when + (j % 700)).toISOString(),
          updated_at: t,
        } as SessionRecord;
        batch.push({ id, change: { record, was: null, log: [] } });
        stats.started(record);
        stats.ended(record);
      }
      await stores.sessions.commitMany(batch);
    }
    await stats.flush();
    // As a service that counted them leaves its store: no backfill to do at the next start.
    await storage.setItem(BACKFILL_KEY, { before: now - WEEK, done: true, counted: 0 });
  } finally {
    await storage.dispose?.();
  }
  return (performance.now() - t0) / 1000;
}

/** p50 of `n` GETs of `url` after two to warm up; fewer (at least 3) when they pass 10 s. */
async function getP50(url: string, n = 30): Promise<number> {
  const ms: number[] = [];
  const until = performance.now() + 10_000;
  for (let i = 0; i < n + 2 && (ms.length < 3 || performance.now() < until); i++) {
    const t = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
    if (i >= 2) ms.push(performance.now() - t);
  }
  return summarize(ms).p50;
}

/**
 * The service's own resident memory (`RssAnon`: heap, stacks, buffers), and the pages of the
 * LMDB file it has mapped and touched (`RssFile`, the kernel's page cache, given back under
 * memory pressure), in MiB.
 */
const rssMiB = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { anon: kb("RssAnon") / 1024, file: kb("RssFile") / 1024 };
};

/** One size: deploy, stop, seed, start again on that store, then the figures. */
async function atSize(b: Bench, count: number): Promise<Figures> {
  const first = await startService({ python: b.python, label: `${count} stored`, env: ENV });
  let svc: Service = first;
  try {
    const { projectId } = await first.deploy("trivial");
    await first.close(true);
    const seedS = await seed(first.dataHome, projectId, count);
    b.log(
      `store growth: ${count.toLocaleString("en-US")} sessions seeded in ${seedS.toFixed(1)} s`,
    );
    svc = await startService({
      python: b.python,
      label: `${count} stored`,
      env: ENV,
      root: first.root,
    });
    const hooks = (await svc.deploy("trivial")).hooks;
    b.log(`store growth: ${count} stored, after start: ${JSON.stringify(rssMiB(svc.pid))} MiB`);
    const spec = { body: JSON_BODY, concurrency: 1, maxMs: 20_000 };
    const tag = `growth.${count}`;
    const accept = await b.load(`${tag}.accept`, {
      ...spec,
      url: hooks.accept!,
      count: 400,
      warmup: 40,
    });
    await svc.idle(60_000);
    const sync = await b.load(`${tag}.sync`, { ...spec, url: hooks.sync!, count: 300, warmup: 30 });
    await svc.idle(60_000);
    b.log(`store growth: ${count} stored, after the load: ${JSON.stringify(rssMiB(svc.pid))} MiB`);
    const list = await getP50(`${svc.url}/api/v1/sessions?project=${projectId}&limit=50`);
    const listAll = await getP50(`${svc.url}/api/v1/sessions?limit=50`);
    const rss = rssMiB(svc.pid);
    const figures = {
      accept: accept.latency.p50,
      sync: sync.latency.p50,
      list,
      listAll,
      rssMiB: rss.anon,
      fileMiB: rss.file,
      seedS,
    };
    b.data[tag] = figures;
    return figures;
  } finally {
    await svc.close();
  }
}

/**
 * Accept p50, sync p50, the first page of the session list (one project's, and across projects)
 * and the service's resident memory, each as the ratio of the largest size to the smallest.
 */
export async function storeGrowthPhase(b: Bench) {
  const [base, ...more] = SIZES;
  const small = await atSize(b, base!);
  const n = (c: number) => c.toLocaleString("en-US");
  for (const count of more) {
    const big = await atSize(b, count);
    const name = (what: string) => `${what}, ${n(count)} stored sessions`;
    const floorName = `the same with ${n(base!)} stored`;
    const flat = { limit: 1.2, below: true, on: "ratio" as const };
    b.rows.push(
      targetRow(name("async accept p50, c=1"), "ms", big.accept, small.accept, floorName, flat),
      targetRow(name("sync p50, c=1"), "ms", big.sync, small.sync, floorName, flat),
      targetRow(
        name("session list, first page, one project"),
        "ms",
        big.list,
        small.list,
        floorName,
        flat,
      ),
      targetRow(
        name("session list, first page, all projects"),
        "ms",
        big.listAll,
        small.listAll,
        floorName,
        flat,
      ),
      targetRow(
        name("service resident memory (RssAnon)"),
        "MiB",
        big.rssMiB,
        small.rssMiB,
        floorName,
        flat,
      ),
      row(name("store file pages mapped (RssFile)"), "MiB", big.fileMiB, small.fileMiB, floorName),
      row(name("seeding (written straight to LMDB)"), "s", big.seedS, small.seedS, floorName),
    );
  }
}
