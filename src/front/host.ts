import { rmSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { createAdaptorServer } from "@hono/node-server";
import type { Settings } from "../config.ts";
import type { Logger } from "../log.ts";
import type { EventRecord, SessionRecord } from "../model/records.ts";
import { closeServer, configureServer, serverOptions } from "../platform/server-options.ts";
import { makeRunDir } from "../runtime/python/run-dirs.ts";
import type { Admission } from "../sessions/ingest.ts";
import type { OutcomeWait } from "../sessions/outcomes.ts";
import { parseStoredJson, type StoredJson } from "../storage/stored-json.ts";
import type { FrontGate } from "./gate.ts";
import type { FrontMessage, HostMessage } from "./messages.ts";
import { yieldToFront } from "./priority.ts";
import type { FrontData } from "./thread.ts";

type Fetch = Parameters<typeof createAdaptorServer>[0]["fetch"];

/** What the front door's messages reach on the host's side. */
export interface FrontTarget {
  /**
   * A session the front committed (`created`): run it here; given `holdMs`, what a held request
   * gets (its first final outcome, its end or the time-out). `landed`, given: its commit is
   * still on its way, and nothing of it is written here before this settles.
   */
  adopt(
    record: SessionRecord,
    event: StoredJson<EventRecord>,
    holdMs?: number,
    landed?: Promise<void>,
  ): Promise<OutcomeWait> | null;
  /** Whether a synchronous session may start here now. */
  admitHeld(): Promise<Admission>;
  /** An event the front stored that started no session. */
  eventStored(): void;
  /** An event for the subscribers of `source` (its text, read only if anyone listens). */
  publish(source: string, event: StoredJson<EventRecord>): void;
  log: Logger;
}

/** How long the front may take to listen before the service gives up starting. */
const START_TIMEOUT_MS = 30_000;

/**
 * Whether this service takes webhooks on a front thread: on by default where its store can be
 * opened from another thread (LMDB) and the service is alone (no fleet to queue work for),
 * without tracing (a request's span would cross threads), and where Unix sockets exist.
 * `SVC_FRONT_THREAD=off` turns it off.
 * @example if (frontThreadFits(settings, { cluster: false, tracing: false })) …
 */
export function frontThreadFits(
  settings: Settings,
  service: { cluster: boolean; tracing: boolean },
): boolean {
  if (!settings.frontThread || service.cluster || service.tracing) return false;
  return settings.storage.startsWith("lmdb:") && process.platform !== "win32";
}

/**
 * The front thread: the compiled module, or, where the service runs from its TypeScript sources
 * (the tests), thread-from-source.mjs, which registers tsx's loader in the new thread first.
 */
function frontWorker(workerData: FrontData): Worker {
  const source = import.meta.url.endsWith(".ts");
  const entry = new URL(source ? "./thread-from-source.mjs" : "./thread.js", import.meta.url);
  return new Worker(entry, { workerData });
}

/**
 * Starts the front door: the host's app served on a Unix socket of its own (in a folder only this
 * process's user may enter, named after the process: removed at its close, or at the next start
 * after a kill), and the front thread listening on the service's address, taking
 * asynchronous webhooks itself and passing the rest to that socket. Resolves once the front
 * listens, with its port; rejects (everything undone) when it cannot.
 * @example const front = await startFrontDoor(settings, drain.fetch, gate, target); front.port;
 */
export async function startFrontDoor(
  settings: Settings,
  fetch: Fetch,
  gate: FrontGate,
  target: FrontTarget,
) {
  // Named after this process, as the fork servers' are: a start after a kill removes it.
  const dir = await makeRunDir();
  const hostSocket = join(dir, "host.sock");
  const back = createAdaptorServer({ fetch, serverOptions: serverOptions(settings) }) as Server;
  // Only the front connects here, over a bounded pool it keeps open: no cap of connections (the
  // front caps the clients'), and an idle one stays until the front lets it go.
  configureServer(back, { ...settings, maxConnections: 0 });
  back.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    back.once("error", reject);
    back.listen(hostSocket, () => resolve());
  });
  const data: FrontData = { settings, hostSocket, gate: gate.buffer, maxActive: gate.maxActive };
  const worker = frontWorker(data);
  // The front's thread exists now, at the service's priority; the host's gives way to it, unless
  // the sessions are to run at the service's own priority (SVC_SESSION_PRIORITY=normal).
  if (settings.sessionPriority !== "normal") yieldToFront();
  const link = frontLink(worker, gate, target);
  try {
    const port = await link.listening;
    return { port, ...link.api(back, dir) };
  } catch (err) {
    link.ending();
    await worker.terminate();
    await new Promise<void>((r) => back.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export type FrontDoor = Awaited<ReturnType<typeof startFrontDoor>>;

/**
 * What a session message of the front does here: an adopted session run (and, held, its
 * outcome sent back), a held session admitted, an event counted or published, a log line.
 * Returns false for a message that is not one of these.
 */
function sessionMessage(
  m: FrontMessage,
  link: { gate: FrontGate; target: FrontTarget; landings: Landings },
  post: (m: HostMessage) => void,
): boolean {
  const { gate, target, landings } = link;
  if (m.t === "adopt") {
    const landed = m.landing ? landings.expect(m.id) : undefined;
    const held = target.adopt(parseStoredJson(m.record), m.event, m.holdMs, landed);
    gate.arrived(); // counted here now (the host's count went up first)
    const sessionId = m.id;
    void held?.then((wait) => post({ t: "outcome", sessionId, wait }));
  } else if (m.t === "landed") landings.landed(m.id);
  else if (m.t === "admit") {
    const { id } = m;
    void target.admitHeld().then(
      (admission) => {
        if (admission.ok) gate.take();
        post({ t: "admitted", id, admission });
      },
      () => post({ t: "admitted", id, admission: { ok: false } }),
    );
  } else if (m.t === "event") target.eventStored();
  else if (m.t === "publish") target.publish(m.source, m.event);
  else if (m.t === "log") target.log[m.level](`front door: ${m.text}`);
  else return false;
  return true;
}

/** The host's end of the front thread: its session messages, its start, metrics and close. */
function frontLink(worker: Worker, gate: FrontGate, target: FrontTarget) {
  const post = (m: HostMessage) => worker.postMessage(m);
  const life = threadLife(worker, target.log);
  const sessions = { gate, target, landings: landings() };
  // The front gathers a turn's messages into one (messages.ts `gatherPosts`).
  worker.on("message", (batch: FrontMessage[]) => {
    for (const m of batch) if (!sessionMessage(m, sessions, post)) life.heard(m);
  });
  return {
    listening: life.listening,
    ending: () => life.ending(),
    api(back: Server, dir: string) {
      let closing: Promise<void> | null = null;
      return {
        /** A project changed: the front reads where its addresses lead again. */
        invalidate: (projectId: string) => post({ t: "invalidate", projectId }),
        /** The front's metrics (prom-client's JSON), summed into the host's at scrape time. */
        metrics: () => life.metrics(post),
        /**
         * Stops listening (the front first, then the host's socket); connections still open
         * after `graceMs` are closed. Resolves once both servers have closed and the thread ended.
         */
        close(graceMs: number): Promise<void> {
          closing ??= (async () => {
            const closed = life.closed();
            post({ t: "close", graceMs });
            await closed;
            await worker.terminate();
            await closeServer(back, graceMs);
            rmSync(dir, { recursive: true, force: true });
          })();
          return closing;
        },
      };
    },
  };
}

/**
 * The commits of held sessions handed over before they landed, until the front says they have
 * (`landed` comes after its `adopt`, on the same port). Bounded by the sessions in flight.
 */
function landings() {
  const waiting = new Map<string, () => void>();
  return {
    expect(id: string): Promise<void> {
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    landed(id: string): void {
      waiting.get(id)?.();
      waiting.delete(id);
    },
  };
}

type Landings = ReturnType<typeof landings>;

/**
 * The front thread's life as the host sees it: listening (or not, in time), its metrics asked
 * and answered, closed, exited (every wait then answered).
 */
export function threadLife(worker: Pick<Worker, "on">, log: Logger) {
  const metricsWaiting = new Map<number, (json: unknown[]) => void>();
  let nextId = 1;
  const closedWaiters: (() => void)[] = [];
  let started!: (port: number) => void;
  let failed!: (err: Error) => void;
  const listening = new Promise<number>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  const timer = setTimeout(
    () => failed(new Error("the front door did not listen in time")),
    START_TIMEOUT_MS,
  );
  void listening.finally(() => clearTimeout(timer)).catch(() => {});
  const wakeClosed = () => {
    for (const wake of closedWaiters.splice(0)) wake();
  };
  worker.on("error", (err) => {
    failed(err);
    log.error("front door: its thread failed", err);
  });
  let exited = false;
  let closing = false;
  worker.on("exit", () => {
    exited = true;
    failed(new Error("the front door's thread exited before it listened"));
    wakeClosed();
    for (const answer of metricsWaiting.values()) answer([]);
    metricsWaiting.clear();
    // Nothing listens any more: the service stops (a supervisor or the user starts it again)
    // rather than run on unreachable.
    if (!closing) {
      log.error("front door: its thread ended; the service stops");
      process.kill(process.pid, "SIGTERM");
    }
  });
  return {
    listening,
    heard(m: FrontMessage): void {
      if (m.t === "metrics") {
        metricsWaiting.get(m.id)?.(m.json);
        metricsWaiting.delete(m.id);
      } else if (m.t === "listening") started(m.port);
      else if (m.t === "failed") failed(new Error(m.message));
      else if (m.t === "closed") wakeClosed();
    },
    metrics(post: (m: HostMessage) => void): Promise<unknown[]> {
      const id = nextId++;
      return new Promise((resolve) => {
        metricsWaiting.set(id, resolve);
        post({ t: "metrics", id });
      });
    },
    /** The host ends the thread (a stop, or a start that failed): its exit is expected. */
    ending(): void {
      closing = true;
    },
    closed(): Promise<void> {
      closing = true;
      return exited ? Promise.resolve() : new Promise<void>((r) => closedWaiters.push(r));
    },
  };
}
