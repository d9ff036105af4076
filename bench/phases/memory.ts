import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Bench, sleep } from "../context.ts";
import { startStdinChild } from "../floors.ts";
import {
  childrenOf,
  forkServers,
  type ProcMemory,
  procMemory,
  sessionProcesses,
  sumMemory,
} from "../proc.ts";
import type { Deployed } from "../service.ts";
import { row } from "../table.ts";

/** Non-durable sessions left waiting (each holds a process); below the 32 running slots. */
export const HOLDING = 24;
/** Durable sessions parked in next_event (no process). */
export const PARKED = 200;

async function until(
  what: string,
  test: () => boolean | Promise<boolean>,
  timeoutMs: number,
  state: () => Promise<string> | string = () => "",
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline)
      throw new Error(`memory phase: timed out waiting for ${what} (${await state()})`);
    await sleep(100);
  }
}

const KiB = 1024;
const mib = (k: number) => k / KiB;
const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** The warm server whose build holds this fixture's handlers.py, with its spares' memory. */
function warmMemory(servicePid: number, fixture: string) {
  const source = readFileSync(join(fixtures, fixture, "handlers.py"), "utf8");
  const server = forkServers(servicePid).find((s) => {
    if (!s.warmDir) return false;
    try {
      return readFileSync(join(s.warmDir, "handlers.py"), "utf8") === source;
    } catch {
      return false;
    }
  });
  if (!server) return null;
  return {
    pid: server.pid,
    server: procMemory(server.pid),
    spares: sumMemory(childrenOf(server.pid)),
  };
}

/**
 * Memory per warm deployment: its warm server (imported the runner, the SDK and the handler
 * module) and the spare children it keeps forked, RSS and Pss, for the trivial and heavy fixtures.
 */
function warmRows(b: Bench, bare: ProcMemory) {
  for (const fixture of ["trivial", "heavy"]) {
    const m = warmMemory(b.svc.pid, fixture);
    b.data[`memory.warm.${fixture}`] = m;
    if (!m) {
      b.rows.push(row(`warm server (${fixture}): not running`, "", null, null, "–"));
      continue;
    }
    const n = m.spares.count;
    b.rows.push(
      row(
        `warm server (${fixture}) RSS`,
        "MiB",
        mib(m.server.rss),
        mib(bare.rss),
        "bare python RSS",
      ),
      row(
        `warm server (${fixture}) Pss`,
        "MiB",
        mib(m.server.pss),
        mib(bare.pss),
        "bare python Pss",
      ),
      row(`  its ${n} spare children, RSS (sum)`, "MiB", mib(m.spares.rss), null, "–"),
      row(`  its ${n} spare children, Pss (sum)`, "MiB", mib(m.spares.pss), null, "–"),
      row(
        `  per warm deployment (${fixture}): server + spares Pss`,
        "MiB",
        mib(m.server.pss + m.spares.pss),
        mib(bare.pss),
        "bare python Pss",
      ),
    );
  }
}

/**
 * Memory from /proc, the service being another process: the cold fork server, each warm
 * deployment (server and spares), against a bare interpreter and a bare fork of it; then per
 * waiting session: non-durable ones hold a process each, durable ones parked in next_event only
 * the service's memory (its RSS: the heap is not reachable from outside the process).
 * @example await memoryPhase(b, await svc.deploy("wait"));
 */
export async function memoryPhase(b: Bench, wait: Deployed) {
  // Warm the wait deployment (its first session runs cold, starting the cold fork server if no
  // phase did, and starts the deployment's warm server).
  await b.load("memory.warmup", { url: wait.hooks.hold!, body: "{}", concurrency: 1, count: 3 });
  await until("warm-up sessions", async () => (await b.svc.active()) >= 3, 30_000);
  await sleep(300); // subscribed before the signal
  await b.load("memory.warmup.signal", {
    url: wait.hooks.signal!,
    body: "{}",
    concurrency: 1,
    count: 1,
  });
  await b.svc.idle(30_000);
  await sleep(300);
  const cold = forkServers(b.svc.pid).find((s) => s.warmDir === null);
  if (!cold) throw new Error("memory phase: the service's cold fork server is not running");
  const floorProc = await startStdinChild(
    b.python,
    fileURLToPath(new URL("../mem_floor.py", import.meta.url)),
  );
  const bare = procMemory(Number(floorProc.line.parent));
  const bareChild = procMemory(Number(floorProc.line.child));
  await floorProc.close();
  const serverMem = procMemory(cold.pid);
  warmRows(b, bare);

  // Non-durable sessions waiting in next_event: one process each. What the session processes
  // (and the spares forked to replace those taken) add, per held session.
  const standing = sumMemory(sessionProcesses(b.svc.pid));
  const before = procMemory(b.svc.pid);
  await b.load("memory.hold", {
    url: wait.hooks.hold!,
    body: "{}",
    concurrency: 8,
    count: HOLDING,
  });
  await until("holding sessions", async () => (await b.svc.active()) >= HOLDING, 30_000);
  // Each held session holds a process: a new one, or one that ran a warm-up session and was
  // kept for reuse (non-durable sessions re-import in a kept process by default). Those few
  // count in `standing` too, so the per-session figures below are a little under the truth.
  await until(
    "each holding session in a process",
    () => sessionProcesses(b.svc.pid).length >= HOLDING,
    30_000,
    () => `${sessionProcesses(b.svc.pid).length} session processes, ${standing.count} before`,
  );
  await sleep(500); // let each reach next_event
  const held = sumMemory(sessionProcesses(b.svc.pid));
  const heldService = procMemory(b.svc.pid);
  await b.load("memory.signal.hold", {
    url: wait.hooks.signal!,
    body: "{}",
    concurrency: 1,
    count: 1,
  });
  await b.svc.idle(30_000);
  // The processes left now: spares, and the held sessions' kept for reuse.
  const idleCount = sessionProcesses(b.svc.pid).length;

  // Durable sessions parked in next_event: no process, only the service's records.
  await sleep(300);
  const base = procMemory(b.svc.pid);
  const t0 = Date.now();
  await b.load("memory.park", {
    url: wait.hooks.park!,
    body: "{}",
    concurrency: 16,
    count: PARKED,
  });
  // Parked: every park session has started (its process subscribed and waited in next_event)
  // and no process is left beyond those idle before. Queued sessions hold no process either,
  // so the process count alone would send the signal before some have subscribed.
  const startedParks = async () =>
    (await b.svc.sessions(wait.projectId, "running")).filter(
      (s) => s.trigger_name === "park" && s.started_at !== null,
    ).length;
  await until(
    "durable sessions to park",
    async () =>
      sessionProcesses(b.svc.pid).length <= idleCount + 2 && (await startedParks()) >= PARKED,
    60_000,
    async () =>
      `${sessionProcesses(b.svc.pid).length} session processes, ${idleCount} before; ${await startedParks()} started`,
  );
  const parkMs = Date.now() - t0;
  const parked = procMemory(b.svc.pid);
  const t1 = Date.now();
  await b.load("memory.signal.park", {
    url: wait.hooks.signal!,
    body: "{}",
    concurrency: 1,
    count: 1,
  });
  const drained = await b.svc.idle(60_000);
  const resumeMs = Date.now() - t1;
  const parkSessions = (await b.svc.sessions(wait.projectId)).filter(
    (s) => s.trigger_name === "park",
  );
  const completed = parkSessions.filter((s) => s.state === "completed").length;
  const states: Record<string, number> = {};
  for (const s of parkSessions) states[s.state] = (states[s.state] ?? 0) + 1;

  const perHold = {
    childPssKiB: (held.pss - standing.pss) / HOLDING,
    childUssKiB: (held.uss - standing.uss) / HOLDING,
    serviceRssKiB: (heldService.rss - before.rss) / HOLDING,
  };
  const perPark = {
    rssKiB: (parked.rss - base.rss) / PARKED,
    pssKiB: (parked.pss - base.pss) / PARKED,
  };
  b.data.memory = {
    coldForkServer: serverMem,
    bareInterpreter: bare,
    bareForkedChild: bareChild,
    holding: { standing, held, ...perHold },
    parked: { count: PARKED, parkMs, resumeMs, drained, completed, states, ...perPark },
    service: { before, heldService, base, parked },
  };
  b.rows.push(
    row("cold fork server RSS", "MiB", mib(serverMem.rss), mib(bare.rss), "bare python RSS"),
    row("cold fork server Pss", "MiB", mib(serverMem.pss), mib(bare.pss), "bare python Pss"),
    row(
      "idle session process Pss added per waiting non-durable session",
      "MiB",
      mib(perHold.childPssKiB),
      mib(bareChild.pss),
      "bare fork Pss",
    ),
    row(
      "  same, USS (private pages)",
      "MiB",
      mib(perHold.childUssKiB),
      mib(bareChild.uss),
      "bare fork USS",
    ),
    row(
      `service RSS change per parked durable session (N=${PARKED}; no GC from outside: noisy)`,
      "KiB",
      perPark.rssKiB,
      null,
      "–",
    ),
    row(
      `parked sessions resumed and completed (of ${PARKED})`,
      "",
      completed,
      PARKED,
      "parked",
      "all",
      (v) => v === PARKED && drained,
      `resumed in ${(resumeMs / 1000).toFixed(1)} s`,
    ),
  );
}
