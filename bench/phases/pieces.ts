import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveSettings } from "../../src/config.ts";
import type { EventRecord } from "../../src/model/records.ts";
import { createStorageFromUrl } from "../../src/storage/driver.ts";
import { createStores } from "../../src/storage/records.ts";
import { type Bench, JSON_BODY } from "../context.ts";
import { childTimeline } from "../fork-probe.ts";
import { median } from "../stats.ts";

type Hooks = { projectId: string; hooks: Record<string, string> };

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

function event(i: number): EventRecord {
  return {
    id: `evt_${String(i).padStart(12, "0")}`,
    project_id: "prj_bench",
    trigger_id: "trg_bench",
    trigger_name: "accept",
    webhook_id: "wh_bench",
    event_type: "post",
    data: {
      method: "POST",
      raw_url: "/webhooks/wh_bench",
      url: { path: "/webhooks/wh_bench", query: {}, path_suffix: "" },
      headers: { "Content-Type": "application/json", Host: "127.0.0.1" },
      body: { bytes: "e30=", text: JSON_BODY, json: JSON.parse(JSON_BODY), form: null },
    },
    session_id: `ses_${i}`,
    created_at: new Date().toISOString(),
  };
}

async function perOp(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await op(i);
  return Number(process.hrtime.bigint() - t) / 1e3 / n;
}

/**
 * Store writes, and a journal read at 2k keys, on one storage URL: the default engine (whatever
 * `resolveSettings` gives a fresh data home, as `cli up` would) and `memory:`, in this process.
 */
async function storage(url: string) {
  const storage = createStorageFromUrl(url);
  try {
    const stores = createStores(storage);
    const eventPutUs = await perOp(200, (i) => stores.events.put(event(i)));
    const journalAppendUs = await perOp(200, (i) =>
      stores.journals.append("ses_x", { seq: i, kind: "activity", function: "f", result: "gAQ=" }),
    );
    for (let filled = 200; filled < 2000; filled++) await stores.events.put(event(filled));
    const journalListUs = await perOp(20, () => stores.journals.list("ses_missing"));
    return { eventPutUs, journalAppendUs, journalListUs };
  } finally {
    await storage.dispose();
  }
}

function ms(ns: number) {
  return ns / 1e6;
}

/**
 * What dominates: store writes, the fork, the handler import, outcome signalling (a sync probe
 * handler that stamps the wall clock at import and call). The service runs in another process,
 * so there is no in-process CPU profile here: BENCH_PROFILE=1 runs it under `--cpu-prof`.
 */
export async function piecesPhase(b: Bench, { probe }: { probe: Hooks }) {
  const home = mkdtempSync(join(tmpdir(), "hookline-bench-store-"));
  const store: Record<string, Awaited<ReturnType<typeof storage>>> = {};
  try {
    const defaultUrl = resolveSettings({ dataHome: home }, {}).storage;
    for (const [name, url] of [
      [`default (${defaultUrl.replace(home, "<data home>")})`, defaultUrl],
      ["memory:", "memory:"],
    ] as const) {
      const s = await storage(url);
      store[name] = s;
      b.notes.push(
        `- storage ${name}, in the bench's process: event put ${s.eventPutUs.toFixed(1)} µs, journal append ` +
          `${s.journalAppendUs.toFixed(1)} µs, journal list (a durable session's start) at 2k keys ${(s.journalListUs / 1000).toFixed(2)} ms`,
      );
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }

  const py = JSON.parse(
    execFileSync(b.python, [here("../py_pieces.py"), here("../fixtures/trivial/handlers.py")], {
      encoding: "utf8",
    }),
  ) as {
    fork_exit_us: number;
    child_ctypes_us: number;
    rewrite_us: Record<string, number>;
    compile_us: Record<string, number>;
    exec_us: Record<string, number>;
  };
  const file = "trivial/handlers.py";
  b.notes.push(
    `- Python: fork+exit+wait of a warm interpreter ${(py.fork_exit_us / 1000).toFixed(2)} ms; handler import: ` +
      `rewrite ${py.rewrite_us[file]!.toFixed(0)} µs (plain compile ${py.compile_us[file]!.toFixed(0)} µs), ` +
      `module body ${py.exec_us[file]!.toFixed(1)} µs; \`import ctypes\` in a forked child, were it not done once in the fork server ` +
      `(prctl.py die_with_parent) ${(py.child_ctypes_us / 1000).toFixed(2)} ms`,
  );
  const fork = b.data["fork.floor"] as { latency: { p50: number } } | undefined;
  if (fork)
    b.notes.push(`- fork server connect → child hello, c=1: p50 ${fork.latency.p50.toFixed(2)} ms`);

  // A copy: the runner writes its code cache (__hookline_cache__) beside the module it loads.
  const probeDir = mkdtempSync(join(tmpdir(), "hookline-bench-probe-"));
  cpSync(here("../fixtures/probe"), probeDir, {
    recursive: true,
    filter: (src) => !src.includes("__hookline_cache__"),
  });
  const child = await childTimeline(b.python, probeDir, event(0).data, 50).finally(() =>
    rmSync(probeDir, { recursive: true, force: true }),
  );
  b.notes.push(
    `- a session's process without the service (medians): connect → hello ${child.hello!.toFixed(2)} ms; ` +
      `start → handler module import starts ${child.setup!.toFixed(2)} ms; import → outcome sent ` +
      `${child.handler!.toFixed(2)} ms; outcome → done ${child.done!.toFixed(2)} ms; done → exit ${child.exit!.toFixed(2)} ms`,
  );

  const r = await b.load("pieces.probe", {
    url: probe.hooks.probe!,
    body: JSON_BODY,
    concurrency: 1,
    count: 100,
    warmup: 20,
    detail: true,
  });
  // With a deployment-warm server the module was imported before the request (import_started
  // predates it); a session that ran cold imported it on the request's path.
  const seg = { toCall: [] as number[], handler: [] as number[], back: [] as number[] };
  let cold = 0;
  for (const d of r.details ?? []) {
    if (d.status !== 201) continue;
    const t = JSON.parse(d.body) as Record<"import_started" | "called" | "outcome", number>;
    if (ms(t.import_started) > d.start) cold++;
    seg.toCall.push(ms(t.called) - d.start);
    seg.handler.push(ms(t.outcome - t.called));
    seg.back.push(d.end - ms(t.outcome));
  }
  const segments = Object.fromEntries(Object.entries(seg).map(([k, v]) => [k, median(v)]));
  b.notes.push(
    `- sync round trip (median of ${seg.back.length}, total p50 ${r.latency.p50.toFixed(2)} ms; ${cold} imported the module ` +
      `on the request's path, the rest were forked from the warm server): request → handler called ` +
      `${segments.toCall!.toFixed(2)} ms; handler → http_outcome sent ${segments.handler!.toFixed(2)} ms; ` +
      `outcome → response at the client ${segments.back!.toFixed(2)} ms`,
  );
  await b.svc.idle(30_000);
  b.data.breakdown = { storage: store, python: py, child, probe: segments };
}
