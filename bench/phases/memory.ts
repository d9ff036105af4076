import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type Bench, sleep } from "../context.ts";
import { startStdinChild } from "../floors.ts";
import { childrenOf, findForkServer, procMemory, sumMemory } from "../proc.ts";
import { row } from "../table.ts";

/** Non-durable sessions left waiting (each holds a process); below the 32 running slots. */
export const HOLDING = 24;
/** Durable sessions parked in next_event (no process). */
export const PARKED = 400;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Heap used and RSS of this process (the service's), bytes, after a full collection. */
function serviceMemory() {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, rss: m.rss, external: m.external + m.arrayBuffers };
}

async function until(what: string, test: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`memory phase: timed out waiting for ${what}`);
    await sleep(50);
  }
}

const KiB = 1024;
/** Children a fork server keeps without any session: 2 spares, 1 connected ahead. */
const STANDING = 3;

/**
 * Memory: the fork server and an idle forked child (RSS, Pss, USS from /proc), against a bare
 * interpreter and a bare fork of it; then per waiting session: non-durable ones hold a process
 * each, durable ones parked in next_event hold only the service's memory.
 */
export async function memoryPhase(
  b: Bench,
  wait: { projectId: string; hooks: Record<string, string> },
) {
  const server = findForkServer();
  if (!server) throw new Error("memory phase: the service's fork server is not running");
  const floorProc = await startStdinChild(
    b.python,
    fileURLToPath(new URL("../mem_floor.py", import.meta.url)),
  );
  const bare = procMemory(Number(floorProc.line.parent));
  const bareChild = procMemory(Number(floorProc.line.child));
  await floorProc.close();
  const serverMem = procMemory(server);

  // Non-durable sessions waiting in next_event: one process each.
  const before = serviceMemory();
  await b.load("memory.hold", {
    url: wait.hooks.hold!,
    body: "{}",
    concurrency: 8,
    count: HOLDING,
  });
  await until(
    "holding sessions to fork",
    () => childrenOf(server).length >= HOLDING + STANDING,
    30_000,
  );
  await sleep(500); // let each reach next_event
  const children = childrenOf(server);
  const held = sumMemory(children);
  const heldService = serviceMemory();
  await b.load("memory.signal.hold", {
    url: wait.hooks.signal!,
    body: "{}",
    concurrency: 1,
    count: 1,
  });
  await b.svc.idle(30_000);
  // Against the service once they are gone (same heap, minus the sessions) as well as before.
  const released = serviceMemory();

  // Durable sessions parked in next_event: no process, only the service's records.
  const base = serviceMemory();
  const t0 = Date.now();
  await b.load("memory.park", {
    url: wait.hooks.park!,
    body: "{}",
    concurrency: 16,
    count: PARKED,
  });
  await until(
    "durable sessions to park",
    // Parked sessions hold no process: what is left is the standing children (the fork
    // server's spares and the connection the service made ahead).
    async () => childrenOf(server).length <= STANDING && (await b.svc.active()) >= PARKED,
    90_000,
  );
  const parkMs = Date.now() - t0;
  const parked = serviceMemory();
  const t1 = Date.now();
  await b.load("memory.signal.park", {
    url: wait.hooks.signal!,
    body: "{}",
    concurrency: 1,
    count: 1,
  });
  const drained = await b.svc.idle(90_000);
  const resumeMs = Date.now() - t1;
  const completed = (await b.svc.sessions(wait.projectId, "completed")).filter(
    (s) => s.trigger_name === "park",
  ).length;

  const perHold = {
    childRssKiB: held.rss / held.count,
    childPssKiB: held.pss / held.count,
    childUssKiB: held.uss / held.count,
    serviceHeapKiB:
      (heldService.heapUsed - (before.heapUsed + released.heapUsed) / 2) / HOLDING / KiB,
  };
  const perPark = {
    heapKiB: (parked.heapUsed - base.heapUsed) / PARKED / KiB,
    rssKiB: (parked.rss - base.rss) / PARKED / KiB,
  };
  b.data.memory = {
    forkServer: serverMem,
    bareInterpreter: bare,
    bareForkedChild: bareChild,
    holding: { count: held.count, ...perHold },
    parked: { count: PARKED, parkMs, resumeMs, drained, completed, ...perPark },
    service: { before, heldService, released, base, parked },
  };
  const mib = (k: number) => k / KiB;
  b.rows.push(
    row(
      "fork server (warm interpreter) RSS",
      "MiB",
      mib(serverMem.rss),
      mib(bare.rss),
      "bare python RSS",
    ),
    row("fork server Pss", "MiB", mib(serverMem.pss), mib(bare.pss), "bare python Pss"),
    row(
      "idle session child Pss (waiting, non-durable)",
      "MiB",
      mib(perHold.childPssKiB),
      mib(bareChild.pss),
      "bare fork Pss",
    ),
    row(
      "idle session child USS (private pages)",
      "MiB",
      mib(perHold.childUssKiB),
      mib(bareChild.uss),
      "bare fork USS",
    ),
    row("  service heap per waiting non-durable session", "KiB", perHold.serviceHeapKiB, null, "–"),
    row(`service heap per parked durable session (N=${PARKED})`, "KiB", perPark.heapKiB, null, "–"),
    row(
      "  service RSS growth per parked session (incl. garbage)",
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
