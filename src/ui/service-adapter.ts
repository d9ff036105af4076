import { replayReports } from "../deploy/replay-check.ts";
import { HooklineError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { ProjectDoc, SessionRecord } from "../model/records.ts";
import { rerunSession } from "../routes/api/rerun.ts";
import { startManualRun } from "../routes/api/run.ts";
import { functionKinds } from "../sessions/entry-points.ts";
import type { SessionManager } from "../sessions/manager.ts";
import { readOverview } from "../stats/overview.ts";
import type { SessionStats } from "../stats/session-stats.ts";
import type { Stores } from "../storage/records.ts";
import { journalView } from "../wire/journal-view.ts";
import { aboutView, VERSION } from "./about.ts";
import type { UiData } from "./data.ts";
import { projectView, projectSummary as summary } from "./record-views.ts";
import { authorizeCheck, liveCounts, type ServiceFacts, sameEvent } from "./service-facts.ts";
import {
  createSessionReader,
  listSessions,
  type SessionReader,
  watchSession,
} from "./session-reader.ts";
import { createTestRequests } from "./test-requests.ts";

export interface UiDataDeps {
  stores: Stores;
  sessions: SessionManager;
  /** The service's own fetch (`app.fetch`): test requests go through the webhook route. */
  fetch: (req: Request) => Promise<Response>;
  /** The session counters the overview reads (src/stats/); without them it shows zeros. */
  stats?: SessionStats;
  log?: Logger;
  /** What the settings page and the Authorize hints read (names of variables, never values). */
  facts?: ServiceFacts;
  /** Opens a sealed secret, so a connection's status can tell an empty secret from a set one. */
  openSecret?: (sealed: string) => string;
}

/**
 * @example const data = createUiData({ stores, sessions, fetch: (r) => app.fetch(r) });
 */
export function createUiData(deps: UiDataDeps): UiData {
  const { stores, sessions } = deps;
  const open = deps.openSecret ?? ((x: string) => x);
  const oauthSettings = deps.facts?.oauthSettings ?? {};
  const reader = createSessionReader(stores, sessions);
  const tests = createTestRequests(stores, deps.fetch);
  const watchers = new Set<(record: SessionRecord) => void>();
  const notify = (record: SessionRecord) => {
    for (const w of watchers) w({ ...record });
  };
  // Every session that starts here, whoever asked (a webhook, the shared queue, a re-run).
  sessions.onStarted((record) => {
    tests.started(record);
    followStarted(sessions, reader, record, notify);
  });

  return {
    async dispose() {},
    async listProjects() {
      return (await stores.projects.list()).map(summary);
    },
    async project(ref) {
      const doc = ref.startsWith("prj_")
        ? await stores.projects.get(ref)
        : await stores.projects.byName(ref);
      if (!doc) return null;
      const view = projectView(doc, open, new Date(), oauthSettings);
      return { ...view, ...(await activeEntryPoints(stores, doc)) };
    },
    overview: (range) => readOverview(stores.storage, range, Date.now(), deps.stats),
    liveCounts: (projectId) => liveCounts(stores, projectId),
    listSessions: (q) => listSessions(stores, reader, q),
    async session(id) {
      const h = await reader.held(id);
      if (!h) return null;
      const event = await stores.events.get(h.record.event_id);
      const steps = h.record.durable ? await stores.journals.list(id) : [];
      return {
        record: { ...h.record },
        event,
        log: [...h.entries],
        journal: steps.map((s) => journalView(s, h.record)),
        ...(await sameEvent(stores, reader, h.record)),
        inFlight: [...(sessions.live(id)?.log.inFlight.values() ?? [])],
      };
    },
    watchSessions(onChange) {
      watchers.add(onChange);
      return () => watchers.delete(onChange);
    },
    watchSession: (id, from, onChange) => watchSession(sessions, reader, id, from, onChange),
    async stop(id) {
      if (!(await reader.record(id)))
        throw new HooklineError("not_found", `session "${id}" not found`);
      return sessions.stop(id);
    },
    rerun: (id, from) => rerunSession(stores, sessions, id, from),
    replayReport: (projectId) => replayReports(stores.storage).get(projectId),
    about: async () => aboutView(VERSION, deps.facts?.host ?? null, oauthSettings),
    authorizeCheck: (cid) =>
      authorizeCheck(stores, (doc) => projectView(doc, open, new Date(), oauthSettings), cid),
    run: (projectId, fields) => startManualRun(stores, sessions, projectId, fields),
    testRequest: (projectId, triggerName, req) => tests.send(projectId, triggerName, req),
  };
}

/**
 * The active deployment's top-level functions: entry points per file (what the Run form
 * offers), and helpers and activities apart ([] with no deployment).
 */
async function activeEntryPoints(stores: Stores, doc: ProjectDoc) {
  const depId = doc.project.active_deployment_id;
  const deployment = depId ? await stores.deployments.get(depId) : null;
  const build = deployment ? await stores.builds.get(deployment.build_id) : null;
  if (!build) return { entry_points: [], not_entry_points: [] };
  const calls = doc.triggers.flatMap((t) => (t.call ? [t.call.replace(/^\.\//, "")] : []));
  const files = functionKinds(build, calls);
  return {
    entry_points: files
      .map((f) => ({
        file: f.file,
        functions: f.functions.filter((fn) => fn.kind === "entry").map((fn) => fn.name),
      }))
      .filter((f) => f.functions.length > 0),
    not_entry_points: files.flatMap((f) =>
      f.functions.flatMap((fn) =>
        fn.kind === "entry" ? [] : [{ loc: `${f.file}:${fn.name}`, kind: fn.kind }],
      ),
    ),
  };
}

/**
 * Tells the list watchers of a session that started here, of each state it takes, and of its
 * end; keeps it in the reader once ended, until storage has caught up.
 */
function followStarted(
  sessions: SessionManager,
  reader: SessionReader,
  record: SessionRecord,
  notify: (record: SessionRecord) => void,
): void {
  const live = sessions.live(record.id);
  if (live) {
    const unlisten = live.log.listen((e) => {
      if (e.kind === "state") notify(live.record);
    });
    sessions.onEnd(record.id, (final) => {
      unlisten();
      reader.remember({ record: final, entries: live.log.entries });
      notify(final);
    });
  }
  notify(live?.record ?? record);
}
