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
 * The base's service and a larger one's start together once both stores are seeded and are read
 * in turns (accept, sync, the lists), so that a busy moment of a shared machine does not land on
 * one size only, and both have the same age and load when their memory is read.
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

/**
 * p50 of GETs of each of `urls`, taken in turns (one of each per round, `n` rounds after two to
 * warm up; fewer, at least 3, when they pass 20 s): a moment the machine is busy slows each alike,
 * so the ratio of two services' lists reads the stores, not the moment.
 */
async function interleavedP50(urls: string[], n = 40): Promise<number[]> {
  const ms: number[][] = urls.map(() => []);
  const until = performance.now() + 20_000;
  for (let i = 0; i < n + 2 && (ms[0]!.length < 3 || performance.now() < until); i++) {
    for (const [k, url] of urls.entries()) {
      const t = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
      if (i >= 2) ms[k]!.push(performance.now() - t);
    }
  }
  return ms.map((m) => summarize(m).p50);
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

/** A store of one size, seeded, no service on it. */
interface Seeded {
  count: number;
  root: string;
  projectId: string;
  seedS: number;
}

/** A seeded store and its service, running (its figures are read beside another's). */
interface AtSize extends Seeded {
  svc: Service;
  hooks: Record<string, string>;
}

/** One size: a service deploys the project and stops, then the store is seeded. */
async function seeded(b: Bench, count: number): Promise<Seeded> {
  const first = await startService({ python: b.python, label: `${count} stored`, env: ENV });
  let projectId: string;
  try {
    projectId = (await first.deploy("trivial")).projectId;
  } catch (err) {
    await first.close();
    throw err;
  }
  await first.close(true);
  const seedS = await seed(first.dataHome, projectId, count);
  b.log(`store growth: ${count.toLocaleString("en-US")} sessions seeded in ${seedS.toFixed(1)} s`);
  return { count, root: first.root, projectId, seedS };
}

/** A service started on a seeded store, the project deployed again. */
async function started(b: Bench, store: Seeded): Promise<AtSize> {
  const { count, root } = store;
  const svc = await startService({ python: b.python, label: `${count} stored`, env: ENV, root });
  try {
    const hooks = (await svc.deploy("trivial")).hooks;
    b.log(`store growth: ${count} stored, after start: ${JSON.stringify(rssMiB(svc.pid))} MiB`);
    return { ...store, svc, hooks };
  } catch (err) {
    await svc.close();
    throw err;
  }
}

/** Rounds a load is cut into, taken in turns by the two services. */
const ROUNDS = 4;

/**
 * p50 at c=1 of `count` requests to each service's `hook`, taken in turns: ROUNDS rounds, each a
 * share of the requests to one service and then to the other, each service idle again before the
 * other's turn. A moment the machine is busy then slows both alike, so their ratio reads the
 * stores, not the moment.
 */
async function interleavedLoad(
  b: Bench,
  sizes: AtSize[],
  hook: string,
  count: number,
): Promise<number[]> {
  const ms: number[][] = sizes.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, s] of sizes.entries()) {
      const r = await b.client.run({
        url: s.hooks[hook]!,
        body: JSON_BODY,
        concurrency: 1,
        count: count / ROUNDS,
        warmup: round === 0 ? 30 : 5,
        maxMs: 20_000,
        detail: true,
      });
      if (r.errors) throw new Error(`store growth: ${hook} at ${s.count}: ${r.errors} errors`);
      ms[k]!.push(...(r.details ?? []).map((d) => d.end - d.start));
      await s.svc.idle(60_000);
    }
  }
  return ms.map((m) => summarize(m).p50);
}

/** Both stores' figures: accept, sync and the session lists read in turns; memory after. */
async function figuresOf(b: Bench, sizes: AtSize[]): Promise<Figures[]> {
  const accept = await interleavedLoad(b, sizes, "accept", 400);
  const sync = await interleavedLoad(b, sizes, "sync", 300);
  const lists = await interleavedP50(
    sizes.flatMap((s) => [
      `${s.svc.url}/api/v1/sessions?project=${s.projectId}&limit=50`,
      `${s.svc.url}/api/v1/sessions?limit=50`,
    ]),
  );
  return sizes.map((s, i) => {
    const rss = rssMiB(s.svc.pid);
    b.log(`store growth: ${s.count} stored, after the load: ${JSON.stringify(rss)} MiB`);
    const figures: Figures = {
      accept: accept[i]!,
      sync: sync[i]!,
      list: lists[2 * i]!,
      listAll: lists[2 * i + 1]!,
      rssMiB: rss.anon,
      fileMiB: rss.file,
      seedS: s.seedS,
    };
    b.data[`growth.${s.count}`] = figures;
    return figures;
  });
}

/**
 * Accept p50, sync p50, the first page of the session list (one project's, and across projects)
 * and the service's resident memory, each as the ratio of the largest size to the smallest.
 */
export async function storeGrowthPhase(b: Bench) {
  const [base, ...more] = SIZES;
  const baseStore = await seeded(b, base!);
  for (const count of more) await atLargerSize(b, baseStore, await seeded(b, count));
}

/**
 * A larger store beside the base one: both services started at once, as alike as can be (the
 * same age, the same load), their figures read in turns.
 */
async function atLargerSize(b: Bench, baseStore: Seeded, bigStore: Seeded) {
  const services: AtSize[] = [];
  let small: Figures;
  let big: Figures;
  try {
    for (const store of [baseStore, bigStore]) services.push(await started(b, store));
    [small, big] = (await figuresOf(b, services)) as [Figures, Figures];
  } finally {
    for (const s of services) await s.svc.close();
  }
  const n = (c: number) => c.toLocaleString("en-US");
  const name = (what: string) => `${what}, ${n(bigStore.count)} stored sessions`;
  const floorName = `the same with ${n(baseStore.count)} stored`;
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
