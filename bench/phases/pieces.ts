import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createStorage } from "unstorage";
import memory from "unstorage/drivers/memory";
import type { EventRecord } from "../../src/model/records.ts";
import { createStores } from "../../src/storage/stores.ts";
import { type Bench, JSON_BODY } from "../context.ts";
import { childTimeline } from "../fork-probe.ts";
import { type ProfileSummary, profile } from "../profile.ts";
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

/** Store writes on memory storage, and a journal read as the store's key count grows. */
async function storage() {
  const stores = createStores(createStorage({ driver: memory() }));
  const eventPutUs = await perOp(5000, (i) => stores.events.put(event(i)));
  const journalAppendUs = await perOp(5000, (i) =>
    stores.journals.append("ses_x", { seq: i, kind: "activity", function: "f", result: "gAQ=" }),
  );
  const journalListUs: Record<string, number> = {};
  let filled = 10_000;
  for (const keys of [10_000, 50_000, 100_000]) {
    for (; filled < keys; filled++) await stores.events.put(event(filled));
    journalListUs[keys] = await perOp(20, () => stores.journals.list("ses_missing"));
  }
  return { eventPutUs, journalAppendUs, journalListUs };
}

function ms(ns: number) {
  return ns / 1e6;
}

/**
 * What dominates: store writes, the fork, the handler import, outcome signalling (a sync probe
 * handler that stamps the wall clock at import and call), and CPU profiles of the service's main
 * thread under the sync and async loads.
 */
export async function piecesPhase(b: Bench, { trivial, probe }: { trivial: Hooks; probe: Hooks }) {
  const store = await storage();
  b.notes.push(
    `- memory storage: event put ${store.eventPutUs.toFixed(1)} µs, journal append ${store.journalAppendUs.toFixed(1)} µs; ` +
      `journal list (a durable session's start) ${Object.entries(store.journalListUs)
        .map(([k, v]) => `${(v / 1000).toFixed(2)} ms at ${Number(k) / 1000}k keys`)
        .join(", ")}`,
  );

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
      `(forkserver.py _die_with_parent) ${(py.child_ctypes_us / 1000).toFixed(2)} ms`,
  );
  const fork = b.data["fork.floor"] as { latency: { p50: number } } | undefined;
  if (fork)
    b.notes.push(`- fork server connect → child hello, c=1: p50 ${fork.latency.p50.toFixed(2)} ms`);

  const child = await childTimeline(b.python, here("../fixtures/probe"), event(0).data, 100);
  b.notes.push(
    `- a session's process without the service (medians): connect → hello ${child.hello!.toFixed(2)} ms; ` +
      `start → handler module import starts ${child.setup!.toFixed(2)} ms; import → outcome sent ` +
      `${child.handler!.toFixed(2)} ms; outcome → done ${child.done!.toFixed(2)} ms; done → exit ${child.exit!.toFixed(2)} ms`,
  );

  const r = await b.load("pieces.probe", {
    url: probe.hooks.probe!,
    body: JSON_BODY,
    concurrency: 1,
    count: 150,
    warmup: 20,
    detail: true,
  });
  const seg = {
    toImport: [] as number[],
    importBody: [] as number[],
    toCall: [] as number[],
    handler: [] as number[],
    back: [] as number[],
  };
  for (const d of r.details ?? []) {
    if (d.status !== 201) continue;
    const t = JSON.parse(d.body) as Record<
      "import_started" | "import_done" | "called" | "outcome",
      number
    >;
    seg.toImport.push(ms(t.import_started) - d.start);
    seg.importBody.push(ms(t.import_done - t.import_started));
    seg.toCall.push(ms(t.called - t.import_done));
    seg.handler.push(ms(t.outcome - t.called));
    seg.back.push(d.end - ms(t.outcome));
  }
  const segments = Object.fromEntries(Object.entries(seg).map(([k, v]) => [k, median(v)]));
  b.notes.push(
    `- sync round trip (median of ${seg.back.length}, total p50 ${r.latency.p50.toFixed(2)} ms): request → handler module import starts ` +
      `${segments.toImport!.toFixed(2)} ms; module body ${segments.importBody!.toFixed(2)} ms; → handler called ` +
      `${segments.toCall!.toFixed(2)} ms; handler → http_outcome sent ${segments.handler!.toFixed(2)} ms; ` +
      `outcome → response at the client ${segments.back!.toFixed(2)} ms`,
  );
  await b.svc.idle(30_000);

  const profiles: Record<string, ProfileSummary> = {};
  for (const [name, spec] of [
    ["sync c=16", { url: trivial.hooks.sync!, concurrency: 16, count: 800 }],
    ["async c=32", { url: trivial.hooks.accept!, concurrency: 32, count: 1000 }],
    ["call-less c=32", { url: trivial.hooks.store_only!, concurrency: 32, count: 4000 }],
  ] as const) {
    const { summary, raw } = await profile(async () => {
      const res = await b.client.run({ ...spec, body: JSON_BODY });
      await b.svc.idle(60_000);
      return res;
    });
    profiles[name] = summary;
    writeFileSync(
      here(`../results/profile-${name.replace(/[^a-z0-9]+/g, "-")}.cpuprofile.json`),
      JSON.stringify(raw),
    );
    const areas = summary.areas
      .slice(0, 6)
      .map((a) => `${a.area} ${a.pct.toFixed(0)} %`)
      .join(", ");
    const top = summary.top
      .slice(0, 5)
      .map((f) => `${f.fn} ${f.pct.toFixed(1)} %`)
      .join("; ");
    b.notes.push(
      `- CPU profile, service main thread, ${name} (busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms): ${areas}. Top self time: ${top}`,
    );
  }
  b.data.breakdown = { storage: store, python: py, child, probe: segments, profiles };
}
