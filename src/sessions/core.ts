import { type Clock, isoNow, systemClock } from "../clock.ts";
import { type Cluster, localCluster } from "../cluster/cluster.ts";
import { Subscriptions } from "../events/subscriptions.ts";
import type { ProjectKv } from "../kv/project-kv.ts";
import type { Logger } from "../log.ts";
import type { SessionRecord } from "../model/records.ts";
import type { TokenRefresher } from "../oauth/index.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/records.ts";
import { eventHistory } from "./backfill.ts";
import { buildCache } from "./build-cache.ts";
import { SessionChannel } from "./channel.ts";
import { signalParent } from "./child-end.ts";
import { type FrontCounters, liveView, SessionsHere } from "./context.ts";
import { frontParts, handlerEvent } from "./front-parts.ts";
import { createIngest, type IngestParts, ingestDoor } from "./ingest.ts";
import { Lifecycle } from "./lifecycle.ts";
import { Outcomes, type OutcomeWait } from "./outcomes.ts";
import { Parking } from "./parking.ts";
import { projectCache } from "./project-cache.ts";
import { Recovery } from "./recovery.ts";
import { ClusterLink } from "./remote.ts";
import { sessionRunner } from "./run.ts";
import { SdkService } from "./sdk.ts";
import { SharedWork } from "./shared-work.ts";
import { SessionWriter } from "./writer.ts";

/**
 * How long a fleet's instance starts sessions with a project read before (a change drops it at
 * once, over the bus; this bounds a change whose news was lost), as the address cache does.
 */
const PROJECT_TTL_MS = 5000;

/** The session core's options: what it is wired to, its limits, and who hears what it did. */
export interface SessionManagerOptions {
  deps: SessionDeps;
  limits: SessionLimits;
  listeners?: SessionListeners;
}

/** What the session core is wired to: storage, the runtime, the other instances, time. */
export interface SessionDeps {
  stores: Stores;
  runtime: Runtime;
  secrets: SecretBox;
  log: Logger;
  /** The other instances, if any (default: none). */
  cluster?: Cluster;
  /** Time for timers and timestamps (tests drive it by hand). */
  clock?: Clock;
  /**
   * The project store and the service's external base URL: given, the SDK's requests (store,
   * start, signals, outcome, webhook URLs) are answered; absent, they are refused.
   */
  sdk?: { kv: ProjectKv; publicUrl: () => string; oauth?: TokenRefresher | undefined };
  /** The front door's counters, when a thread of its own takes webhooks (src/front/). */
  front?: FrontCounters;
}

/** How much the session core takes on, and how long it waits. */
export interface SessionLimits {
  workflowTimeoutMs: number;
  /** Sessions alive at once (running or waiting for a slot); past it `start` refuses. */
  maxActive: number;
  /**
   * A durable session that waits in next_event this long gives up its Python process and is
   * resumed by replay when the wait ends. Negative: never.
   */
  evictAfterMs: number;
  /** Sessions running here before this instance stops taking shared ones (default maxActive). */
  slots?: number;
  /**
   * A synchronous session is refused (503, nothing stored) when it can expect to wait longer
   * than this for a process (the runtime's estimate). Default: no bound.
   */
  heldWaitMs?: number;
  /**
   * With a front door: the longest an async session it hands over waits to begin while it is
   * taking requests (`SVC_BURST_YIELD`). 0 or absent: sessions begin at once.
   */
  burstYieldMs?: number;
}

/** Who is told what the session core did (retention counts both). */
export interface SessionListeners {
  /** Told when a session has ended and its record is written. */
  onEnded?: (record: SessionRecord) => void;
  /** Told after each event stored. */
  onEvent?: () => void;
}

/**
 * The session core, built in the order its pieces depend on each other, so that none is
 * reached before it exists: the table of sessions here and the session channel first (the
 * pieces below read the one and hear the other); then the writer, the held requests, the
 * subscriptions and parking; the SDK; the runner (one attempt of a session) and the lifecycle
 * (what comes after an attempt); the cluster's parts; and last the one way in. The core has one
 * loop, a session's `start()` starting a session: it goes through `door`, opened at the end.
 * @example const core = buildCore(opts); await core.ingest(request);
 */
export function buildCore(opts: SessionManagerOptions) {
  const { deps, limits, listeners = {} } = opts;
  const clock = deps.clock ?? systemClock;
  const cluster = deps.cluster ?? localCluster();
  const { stores, log } = deps;
  const here = new SessionsHere(limits.maxActive, deps.front, limits.burstYieldMs);
  const channel = new SessionChannel();
  // A fleet on PostgreSQL: every session write carries its owner and epoch (owners).
  const { owners } = cluster;
  const writer = new SessionWriter({ stores, log, clock, owners });
  const outcomes = new Outcomes(clock);
  const subscriptions = subscriptionsLoggedIn(here, clock);
  const parking = new Parking({ evictAfterMs: limits.evictAfterMs, clock });
  const builds = buildCache(stores);
  // A fleet reads its projects from PostgreSQL: kept a while, dropped at a change (the bus).
  const projects = projectCache(stores, cluster.shared ? PROJECT_TTL_MS : 0);
  const door = ingestDoor();
  const live = (id: string) => liveView(here, id);
  const sdk = deps.sdk
    ? new SdkService({ ...deps.sdk, stores, cluster, clock, builds, live, ingest: door })
    : undefined;
  const oauth = deps.sdk?.oauth;
  const { onEnded } = listeners;
  channel.listen(whenSessionLeaves({ subscriptions, outcomes, sdk, log, onEnded }));
  // What a running session is served by: its host (host.ts) answers from these.
  const services = { outcomes, subscriptions, parking, clock, sdk, oauth };
  const runner = sessionRunner({
    stores,
    cached: { builds, projects },
    runtime: deps.runtime,
    secrets: deps.secrets,
    workflowTimeoutMs: limits.workflowTimeoutMs,
    writer,
    services,
    history: eventHistory(cluster, stores),
  });
  const lifecycle = new Lifecycle({
    ...{ here, channel, runner, writer, outcomes, parking, clock, log },
  });
  const link = new ClusterLink(cluster, stores, channel, lifecycle, subscriptions);
  const slots = limits.slots ?? limits.maxActive;
  const work = new SharedWork({ cluster, stores, lifecycle, channel, here, log, clock, slots });
  const recovery = new Recovery({ stores, cluster, lifecycle, here, clock });
  const waitOutcome = (id: string, timeoutMs: number) => outcomeOf(outcomes, stores, id, timeoutMs);
  const admit = admission(lifecycle, here, work, deps.runtime, limits.heldWaitMs);
  const ingest = ingestThrough(
    { clock, stores, onEvent: listeners.onEvent },
    { admit, lifecycle, work, link },
    waitOutcome,
  );
  door.open(ingest);
  return {
    front: frontParts({ lifecycle, link, admit, waitOutcome, onEvent: listeners.onEvent }),
    here,
    channel,
    writer,
    lifecycle,
    services,
    /** The cluster's parts: the bus's link, the shared queue, recovery of sessions nobody runs. */
    cluster: { link, work, recovery },
    ingest,
    /** The projects sessions start with: `forget` at a project's change. */
    projects,
    /** What a replay check runs on (replay-check.ts): the runtime and the secrets. */
    checks: { runtime: deps.runtime, secrets: deps.secrets },
  };
}

export type SessionCore = ReturnType<typeof buildCore>;

/** Subscriptions whose overflow is a warning in the subscribing session's log. */
function subscriptionsLoggedIn(here: SessionsHere, clock: Clock): Subscriptions {
  return new Subscriptions((sessionId, subId) => {
    here.get(sessionId)?.log.append({
      t: isoNow(clock),
      kind: "warning",
      text: `subscription ${subId}: buffer full, oldest event dropped`,
    });
  });
}

/**
 * What a session's end does here: its subscriptions, held requests and signal queue go, its
 * parent (if it has one) gets its end signal, retention counts it.
 */
function whenSessionLeaves(parts: {
  subscriptions: Subscriptions;
  outcomes: Outcomes;
  sdk: SdkService | undefined;
  log: Logger;
  onEnded?: SessionListeners["onEnded"];
}): Parameters<SessionChannel["listen"]>[0] {
  const { subscriptions, outcomes, sdk, log, onEnded } = parts;
  return (e) => {
    if (e.type === "started") return;
    if (e.type === "ended") subscriptions.removeSession(e.record.id);
    outcomes.end(e.record.id, e.record);
    sdk?.closed(e.record.id);
    // A child's end signals its parent, as AutoKitteh does (child-end.ts).
    if (e.type === "ended" && sdk) signalParent(sdk, e.record, e.end, log);
    if (e.type === "ended" && onEnded)
      e.written.then(
        () => onEnded(e.record),
        () => {},
      );
  };
}

/**
 * The one ingest, over the pieces that carry out each of its steps. Admission is refused once
 * the service is stopping (the lifecycle's `closing`): this is the one place that refuses it.
 */
function ingestThrough(
  base: { clock: Clock; stores: Stores; onEvent?: () => void },
  parts: { admit: IngestParts["admit"]; lifecycle: Lifecycle; work: SharedWork; link: ClusterLink },
  outcome: (id: string, timeoutMs: number) => Promise<OutcomeWait>,
) {
  const { clock, stores, onEvent } = base;
  const { admit, lifecycle, work, link } = parts;
  return createIngest({
    clock,
    admit,
    storeEvent: async (event) => {
      await stores.events.put(event);
      onEvent?.();
    },
    publish: (source, e) => link.publishEvent(source, handlerEvent(e)),
    begin: async (input, where, storeEvent) => {
      const record = await (where === "here"
        ? lifecycle.start(input, storeEvent)
        : work.accept(input, storeEvent));
      if (storeEvent) onEvent?.();
      return record;
    },
    outcome,
  });
}

/**
 * Whether a session may start now: not while the service stops; here, while this instance has
 * room, else while the shared queue has; and a synchronous one only if the runtime expects it
 * to get a process within `heldWaitMs` (a request it cannot answer in time is refused at once,
 * rather than answered 504 later).
 */
function admission(
  lifecycle: Lifecycle,
  here: SessionsHere,
  work: SharedWork,
  runtime: Runtime,
  heldWaitMs = Number.POSITIVE_INFINITY,
): IngestParts["admit"] {
  return async (where, sync) => {
    if (lifecycle.closing) return { ok: false };
    if (!(where === "here" ? here.hasRoom() : await work.canAccept(sync))) return { ok: false };
    const waitMs = sync ? (runtime.expectedWaitMs?.(true) ?? 0) : 0;
    if (waitMs <= heldWaitMs) return { ok: true };
    const seconds = (waitMs / 1000).toFixed(1);
    const detail = `too busy to answer in time: a process is expected in about ${seconds} s; retry later`;
    return { ok: false, detail, retryAfterS: waitMs / 1000 };
  };
}

/** Resolves with the first final outcome, the session's end, or a timeout. */
function outcomeOf(
  outcomes: Outcomes,
  stores: Stores,
  id: string,
  timeoutMs: number,
): Promise<OutcomeWait> {
  const held = outcomes.wait(id, timeoutMs);
  if (held) return held;
  return stores.sessions
    .get(id)
    .then((session): OutcomeWait => (session ? { kind: "ended", session } : { kind: "timeout" }));
}
