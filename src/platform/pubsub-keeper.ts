import { systemClock } from "../clock.ts";
import type { PubsubKind, PubsubMessage } from "../connections/google-pubsub.ts";
import type { Pulled } from "../connections/index.ts";
import { keyedLock, serialQueue } from "../locks.ts";
import type { ProjectDoc } from "../model/records.ts";
import { connectionVarStore } from "../oauth/store.ts";
import type { WatchParts } from "./google-watch-removal.ts";
import type { GoogleWatchDeps } from "./google-watches.ts";
import { wakeTimer } from "./google-watches.ts";
import { type PubsubTarget, pubsubPull, pubsubTargets } from "./pubsub-pull.ts";
import {
  ensurePubsubWatch,
  isPubsubWatched,
  nextPubsubLook,
  type PubsubTopics,
  SWEEP_MS,
  stopRemovedPubsub,
} from "./pubsub-watches.ts";

/** The Gmail and Forms watches (Cloud Pub/Sub), made, renewed, read from, stopped. */
export interface PubsubKeeper {
  /** Makes or renews one connection's watch (after an authorization); never rejects. */
  ensure(projectId: string, connection: string): Promise<void>;
  /** A project changed: its watches are looked at (and removed connections' stopped). */
  changed(projectId: string): void;
  /** The connections a verified push is for. */
  targets(kind: PubsubKind, message: PubsubMessage): Promise<PubsubTarget[]>;
  /** What a push makes for one connection (pubsub-pull.ts). */
  pull(target: PubsubTarget, message: PubsubMessage): Promise<Pulled>;
  start(): void;
  dispose(): Promise<void>;
}

/**
 * The keeper of Gmail (`users.watch`) and Google Forms (`watches`) connections' watches, which
 * publish to the service's Pub/Sub topics (`topics`): made once the connection has a token,
 * renewed when due (3 days before the week's expiry) by the one instance whose claim the
 * database takes (the channels' keeper's timer and claims, google-watches.ts), and stopped
 * once the connection is gone.
 * @example const keeper = pubsubKeeper({ projects, cluster, publicUrl, log }, topics); keeper.start();
 */
export function pubsubKeeper(deps: GoogleWatchDeps, topics: PubsubTopics): PubsubKeeper {
  const clock = deps.clock ?? systemClock;
  const store = connectionVarStore(deps.projects);
  const d: WatchParts = { ...deps, clock, store, fetch: deps.google?.fetch ?? fetch };
  const locks = keyedLock();
  let disposed = false;
  const queue = serialQueue((e: unknown) => d.log.error("pub/sub watches", e));
  const serial = queue.run;
  const lookAt = async (doc: ProjectDoc, only?: string) => {
    if (!only) await stopRemovedPubsub(d, doc);
    for (const conn of (doc.connections ?? []).filter(isPubsubWatched)) {
      if (!only || conn.name === only) await ensurePubsubWatch(d, topics, doc, conn);
    }
    const fresh = (await d.projects.stores.projects.get(doc.project.id)) ?? doc;
    let next = clock.now() + SWEEP_MS;
    for (const conn of (fresh.connections ?? []).filter(isPubsubWatched)) {
      next = Math.min(next, nextPubsubLook(fresh, conn, clock.now()));
    }
    return next;
  };
  const sweep = async () => {
    let next = clock.now() + SWEEP_MS;
    for (const doc of await d.projects.stores.projects.list()) {
      next = Math.min(next, await lookAt(doc));
    }
    return next;
  };
  const timer = wakeTimer(clock, () => serial(sweep));
  const byId = async (projectId: string, only?: string) => {
    const doc = await d.projects.stores.projects.get(projectId);
    if (doc) timer.at(await lookAt(doc, only));
  };
  return {
    ensure: (p, c) => serial(() => byId(p, c)).catch(() => {}),
    changed(projectId) {
      if (!disposed) void serial(() => byId(projectId)).catch(() => {});
    },
    targets: (kind, m) => pubsubTargets(d, kind, m),
    pull: (t, m) => pubsubPull(d, locks, t, m),
    start: () => timer.at(clock.now()),
    async dispose() {
      disposed = true;
      timer.stop();
      await queue.idle();
    },
  };
}
