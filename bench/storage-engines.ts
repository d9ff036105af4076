/**
 * Embedded storage engines side by side, on this machine: LMDB (`lmdb`) and SQLite
 * (`better-sqlite3`, WAL, one file), each at the sync setting we would ship and at full sync.
 *
 *   node --import tsx bench/storage-engines.ts [--quick]
 *
 * `lmdb` is a dependency. `better-sqlite3` is not (it builds from source here, see
 * docs/storage.md); to include it: `npm install --no-save better-sqlite3@12.11.1`. An engine
 * that does not load is reported and skipped. Every figure is per operation, in microseconds.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createStorage } from "unstorage";
import fsLite from "unstorage/drivers/fs-lite";
import { atomicBatch } from "../src/storage/drivers/batch.ts";
import { lmdbDriver } from "../src/storage/drivers/lmdb.ts";
import { summarize } from "./stats.ts";

/** What each engine must do, in its own idiom; values are JSON strings as unstorage gives. */
interface Engine {
  put(key: string, value: string): Promise<void>;
  get(key: string): string | undefined | null | Promise<unknown>;
  /** All three or none. */
  batch(ops: { key: string; value: string | null }[]): Promise<void>;
  /** Keys under `prefix` (which ends with ':'), in order, by a range scan. */
  keys(prefix: string): string[] | Promise<string[]>;
  close(): Promise<void>;
}

interface Candidate {
  name: string;
  sync: string;
  open(dir: string): Promise<Engine>;
}

/** The key just past every key starting with `prefix`: ':' + 1 is ';'. */
const rangeEnd = (prefix: string) =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

type LmdbSync = "sync" | "overlapping" | "nometasync";

async function lmdbEngine(dir: string, sync: LmdbSync): Promise<Engine> {
  const { open } = await import("lmdb");
  const db = open<string, string>({
    path: dir,
    encoding: "string",
    // lmdb-js's default on Linux is overlappingSync: a write resolves once committed and the
    // fsync follows. Off, a commit fsyncs before its write resolves.
    overlappingSync: sync === "overlapping",
    noMetaSync: sync === "nometasync",
  });
  return {
    put: async (key, value) => void (await db.put(key, value)),
    get: (key) => db.get(key),
    // A child transaction, as the driver does: a plain async `transaction` commits whatever
    // its callback wrote before throwing; a child transaction rolls back.
    async batch(ops) {
      await db.childTransaction(() => {
        for (const op of ops) op.value === null ? db.remove(op.key) : db.put(op.key, op.value);
      });
    },
    keys: (prefix) => db.getKeys({ start: prefix, end: rangeEnd(prefix) }).asArray,
    close: () => db.close(),
  };
}

/** What the stores will see: Hookline's lmdb driver behind unstorage (parsing JSON on reads). */
async function hooklineLmdb(dir: string): Promise<Engine> {
  const storage = createStorage({ driver: lmdbDriver({ path: dir }) });
  return {
    put: (key, value) => storage.setItem(key, value),
    get: (key) => storage.getItem(key),
    batch: async (ops) => void (await atomicBatch(storage, ops)),
    keys: (prefix) => storage.getKeys(prefix),
    close: () => storage.dispose(),
  };
}

/** The baseline: unstorage's fs-lite, one file per key; its "batch" is three plain writes. */
async function fsLiteEngine(dir: string): Promise<Engine> {
  const driver = fsLite({ base: dir });
  return {
    put: async (key, value) => void (await driver.setItem!(key, value, {})),
    get: (key) => driver.getItem(key, {}) as Promise<unknown>,
    async batch(ops) {
      for (const op of ops) {
        await (op.value === null
          ? driver.removeItem!(op.key, {})
          : driver.setItem!(op.key, op.value, {}));
      }
    },
    // fs-lite walks the whole tree and unstorage filters by prefix afterwards.
    keys: async (prefix) =>
      ((await driver.getKeys(prefix, {})) as string[])
        .map((k) => k.replaceAll("/", ":"))
        .filter((k) => k.startsWith(prefix)),
    close: async () => {},
  };
}

// biome-ignore lint/suspicious/noExplicitAny: better-sqlite3 is optional and untyped here
type SqliteDatabase = any;

async function sqliteEngine(dir: string, synchronous: "NORMAL" | "FULL"): Promise<Engine> {
  const specifier = "better-sqlite3"; // not a dependency: resolved at run time only
  const Database = (await import(specifier)).default;
  const db: SqliteDatabase = new Database(join(dir, "store.db"));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.exec("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID");
  const put = db.prepare(
    "INSERT INTO kv (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
  );
  const del = db.prepare("DELETE FROM kv WHERE k = ?");
  const get = db.prepare("SELECT v FROM kv WHERE k = ?").pluck();
  const keys = db.prepare("SELECT k FROM kv WHERE k >= ? AND k < ? ORDER BY k").pluck();
  const batch = db.transaction((ops: { key: string; value: string | null }[]) => {
    for (const op of ops) op.value === null ? del.run(op.key) : put.run(op.key, op.value);
  });
  return {
    put: async (key, value) => void put.run(key, value),
    get: (key) => get.get(key),
    batch: async (ops) => void batch(ops),
    keys: (prefix) => keys.all(prefix, rangeEnd(prefix)),
    close: async () => db.close(),
  };
}

const candidates: Candidate[] = [
  { name: "fs-lite", sync: "writeFile, no fsync (today's default)", open: fsLiteEngine },
  { name: "lmdb", sync: "fsync each commit", open: (d) => lmdbEngine(d, "sync") },
  { name: "lmdb via driver", sync: "fsync each commit (as shipped)", open: hooklineLmdb },
  { name: "lmdb", sync: "noMetaSync", open: (d) => lmdbEngine(d, "nometasync") },
  {
    name: "lmdb",
    sync: "overlappingSync (lmdb-js default)",
    open: (d) => lmdbEngine(d, "overlapping"),
  },
  { name: "sqlite", sync: "WAL, synchronous=NORMAL", open: (d) => sqliteEngine(d, "NORMAL") },
  { name: "sqlite", sync: "WAL, synchronous=FULL", open: (d) => sqliteEngine(d, "FULL") },
];

const quick = process.argv.includes("--quick");
const N = quick ? 300 : 2000;

/** A ~300-byte JSON document, like a session record. */
function doc(i: number): string {
  return JSON.stringify({
    id: `ses_${String(i).padStart(26, "0")}`,
    project_id: "prj_01JZ8Q6M3T1V4R2X5Y7W9K0ABC",
    event_id: `evt_${String(i).padStart(26, "0")}`,
    state: "completed",
    durable: false,
    attempts: 0,
    created_at: "2026-11-26T07:30:00.000Z",
    updated_at: "2026-11-26T07:30:01.000Z",
    error: null,
    entrypoint: "handlers.py:on_order",
  });
}

async function timeEach(n: number, op: (i: number) => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await op(i);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

const us = (ms: number) => (ms * 1000).toFixed(ms < 0.01 ? 2 : 1);
const row = (cells: string[]) => `| ${cells.join(" | ")} |`;

/** Bytes of the files under `dir`, at any depth. */
function dirBytes(dir: string): number {
  let sum = 0;
  for (const f of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const st = statSync(join(dir, f));
    if (st.isFile()) sum += st.size;
  }
  return sum;
}

async function measure(c: Candidate): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), `bench-${c.name}-`));
  try {
    const db = await c.open(dir);
    const value = doc(0);
    // How long the event loop was busy per put: what a write takes from serving requests.
    const elu = performance.eventLoopUtilization();
    const put = summarize(
      await timeEach(N, (i) => db.put(`events:k${String(i).padStart(8, "0")}`, value)),
    );
    const loopBusy = performance.eventLoopUtilization(elu).active / N;
    const get = summarize(
      await timeEach(N * 5, (i) => db.get(`events:k${String(i % N).padStart(8, "0")}`)),
    );
    const batch = summarize(
      await timeEach(N, (i) =>
        db.batch([
          { key: `sessions:b${i}`, value },
          { key: `session-index:p:b${i}`, value: '"running"' },
          { key: `events:k${String(i).padStart(8, "0")}`, value: null },
        ]),
      ),
    );
    // 10,000 keys under the listed prefix, between 20,000 others on either side of it.
    for (const prefix of ["journals:", "logs:", "projects:"]) {
      for (let i = 0; i < 10_000; i += 100) {
        await db.batch(
          Array.from({ length: 100 }, (_, j) => ({
            key: `${prefix}${String(i + j).padStart(8, "0")}`,
            value,
          })),
        );
      }
    }
    const listed = await db.keys("logs:");
    if (listed.length !== 10_000) throw new Error(`${c.name}: listed ${listed.length} keys`);
    const list = summarize(await timeEach(quick ? 5 : 30, () => db.keys("logs:")));
    // 100 writers at once, as under a burst of webhooks: wall time per put, p50 of the bursts.
    const bursts = await timeEach(quick ? 5 : 20, (b) =>
      Promise.all(Array.from({ length: 100 }, (_, i) => db.put(`events:c${b}-${i}`, value))),
    );
    const burst = summarize(bursts).p50 / 100;
    await db.close();
    return [
      c.name,
      c.sync,
      `${us(put.p50)} / ${us(put.p99)}`,
      us(loopBusy),
      `${us(get.p50)} / ${us(get.p99)}`,
      `${us(batch.p50)} / ${us(batch.p99)}`,
      `${(list.p50).toFixed(2)} ms`,
      us(burst),
      `${(dirBytes(dir) / 2 ** 20).toFixed(1)} MiB`,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const load = loadavg()
  .map((l) => l.toFixed(1))
  .join(" ");
console.log(`node ${process.version}, ${cpus().length} cpus, load ${load}, ${N} samples per op`);
console.log("p50 / p99 in µs; fsync latency on a shared disk varies run to run: compare rows\n");
console.log(
  row([
    "engine",
    "sync",
    "put",
    "loop busy per put",
    "get",
    "3-key batch",
    "list 10k keys",
    "put in a burst of 100",
    "size",
  ]),
);
console.log(row(Array(9).fill("---")));
for (const c of candidates) {
  try {
    console.log(row(await measure(c)));
  } catch (err) {
    console.log(
      row([
        c.name,
        c.sync,
        `skipped: ${(err as Error).message.split("\n")[0]}`,
        "",
        "",
        "",
        "",
        "",
        "",
      ]),
    );
  }
}
