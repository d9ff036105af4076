/**
 * The web UI's overview and a search with many stored sessions: sessions written directly to an
 * LMDB store (records, index, logs), counted as the service counts them (src/stats/), then the
 * pages timed in process (`app.request`), p50 and p95 of 20 each.
 *
 *   node --import tsx bench/ui-overview.ts [--sessions 100000]
 *
 * Sessions are spread over the last week, one in ten failed, one in a hundred prints "needle".
 * The searches: one session's text over a day (read to the request's bound: nothing else
 * matches), "needle" (one in a hundred), the newest event id, a session id, and the API's
 * search (its bound is 10,000 sessions a request).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { idAt } from "../src/ids.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { composeApp } from "../src/platform/compose.ts";
import { createSecretBox } from "../src/secrets.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { fakeRuntime } from "../test/support/fake-runtime.ts";
import { sessionRecord } from "../test/support/records.ts";

const at = process.argv.indexOf("--sessions");
const N = at > 0 ? Number(process.argv[at + 1]) : 100_000;
const WEEK = 7 * 24 * 3_600_000;
const MANIFEST = `version: v2
project: { name: bench }
triggers:
  - { name: hook, type: webhook, call: "handlers.py:on_hook" }
`;

const deployBody = (manifest: string, files: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    manifest,
    manifest_file: "manifest.yaml",
    files: Object.fromEntries(
      Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    ),
  }),
});

async function timed(label: string, fetchOnce: () => Response | Promise<Response>) {
  const ms: number[] = [];
  for (let i = 0; i < 22; i++) {
    const t = performance.now();
    const res = await fetchOnce();
    await res.text();
    if (res.status !== 200) throw new Error(`${label}: ${res.status}`);
    if (i >= 2) ms.push(performance.now() - t); // two to warm up
  }
  ms.sort((a, b) => a - b);
  const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(1);
  console.log(`${label.padEnd(44)} p50 ${q(0.5).padStart(7)} ms   p95 ${q(0.95).padStart(7)} ms`);
}

const dir = mkdtempSync(join(tmpdir(), "hookline-bench-ui-"));
const hook = composeApp({
  services: {
    storage: createStorageFromUrl(`lmdb:${join(dir, "db")}`),
    runtime: fakeRuntime({}).runtime,
    secrets: createSecretBox(randomBytes(32)),
  },
  oauthSettings: {},
});
try {
  const res = await hook.app.request(
    "/api/v1/deploy",
    deployBody(MANIFEST, { "handlers.py": "def on_hook(event):\n    pass\n" }),
  );
  if (res.status !== 200) throw new Error(`deploy: ${res.status}`);
  const project = (await hook.stores.projects.byName("bench"))!.project.id;
  const now = Date.now();
  const t0 = performance.now();
  let needle = "";
  for (let i = 0; i < N; i += 1000) {
    const batch: { id: string; change: { record: SessionRecord; was: null; log: never[] } }[] = [];
    for (let j = i; j < Math.min(N, i + 1000); j++) {
      const when = now - WEEK + Math.floor((j / N) * WEEK);
      const id = `${idAt("ses", when).slice(0, -8)}${String(j).padStart(8, "0")}`;
      const t = new Date(when).toISOString();
      const state = j % 10 === 0 ? "error" : "completed";
      const rec = sessionRecord({
        id,
        project_id: project,
        project_name: "bench",
        event_id: `evt_${id.slice(4)}`,
        state,
        error: state === "error" ? { message: `failed ${j}` } : null,
        created_at: t,
        started_at: t,
        ended_at: new Date(when + (j % 700)).toISOString(),
      });
      const log =
        j % 100 === 0 ? [{ t, kind: "print", text: `needle ${j}`, stream: "stdout" }] : [];
      if (j % 100 === 0) needle = `needle ${j}`;
      batch.push({ id, change: { record: rec, was: null, log: log as never[] } });
      hook.stats.started(rec);
      hook.stats.ended(rec);
    }
    await hook.stores.sessions.commitMany(batch);
  }
  await hook.stats.flush();
  const made = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(`${N.toLocaleString("en-US")} sessions written and counted in ${made} s (lmdb)`);
  for (const range of ["hour", "day", "week"]) {
    await timed(`GET /ui?range=${range}`, () => hook.app.request(`/ui?range=${range}`));
  }
  await timed("GET /ui/sessions (first page)", () => hook.app.request("/ui/sessions"));
  await timed("GET /ui/sessions?range=day (counts, range)", () =>
    hook.app.request("/ui/sessions?range=day"),
  );
  const q = encodeURIComponent(needle);
  await timed(`GET /ui/sessions?q=${needle.replace(" ", "+")}&range=day`, () =>
    hook.app.request(`/ui/sessions?q=${q}&range=day`),
  );
  await timed("GET /ui/sessions?q=needle (1 in 100 match)", () =>
    hook.app.request("/ui/sessions?q=needle"),
  );
  const last = await hook.stores.sessionIndex.page({ projectId: project, limit: 1 });
  const evt = `evt_${last[0]!.id.slice(4)}`;
  await timed("GET /ui/sessions?q=<event id>", () => hook.app.request(`/ui/sessions?q=${evt}`));
  await timed("GET /ui/sessions?q=<session id>", () =>
    hook.app.request(`/ui/sessions?q=${last[0]!.id}`),
  );
  for (const qs of ["", "?project=bench", "?state=error", "?project=bench&state=completed"]) {
    const first = (await (await hook.app.request(`/api/v1/sessions${qs}`)).json()) as {
      sessions: unknown[];
      more: boolean;
    };
    if (first.sessions.length !== 100 || !first.more) throw new Error(`${qs}: not a full page`);
    await timed(`GET /api/v1/sessions${qs} (limit 100)`, () =>
      hook.app.request(`/api/v1/sessions${qs}`),
    );
  }
  await timed("GET /api/v1/sessions?q=needle&limit=50", () =>
    hook.app.request("/api/v1/sessions?q=needle&limit=50"),
  );
} finally {
  await hook.dispose();
  rmSync(dir, { recursive: true, force: true });
}
