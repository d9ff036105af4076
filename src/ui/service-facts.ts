/**
 * Readings of the UI's data layer beside the pages' main ones: the live counts above the
 * sessions list, an OAuth connection's missing app, and a session's runs of the same event.
 */
import { HooklineError } from "../errors.ts";
import { idTime } from "../ids.ts";
import type { ProjectDoc, SessionRecord } from "../model/records.ts";
import type { OAuthEnv } from "../oauth/index.ts";
import type { Stores } from "../storage/records.ts";
import { scanSessions } from "../storage/session-scan.ts";
import type { HostFacts } from "./about.ts";
import type { OAuthMissing, ProjectView } from "./data.ts";
import type { SessionReader } from "./session-reader.ts";

/** What the settings page and the Authorize hints read: names of variables, never values. */
export interface ServiceFacts {
  /** What the host knows of itself (mode, storage, data home, Python). */
  host?: HostFacts;
  /** The service's environment for OAuth apps (`GOOGLE_CLIENT_ID`, …). */
  oauthSettings?: OAuthEnv;
}

/**
 * Sessions created and running now: the index's count, a key range per project and state
 * (across all projects the index would be read whole).
 * @example await liveCounts(stores) // { created: 0, running: 2 }
 */
export async function liveCounts(stores: Stores, projectId?: string) {
  const ids = projectId ? [projectId] : (await stores.projects.list()).map((d) => d.project.id);
  const out = { created: 0, running: 0 };
  for (const id of ids) {
    out.created += await stores.sessionIndex.count(id, "created");
    out.running += await stores.sessionIndex.count(id, "running");
  }
  return out;
}

/**
 * The project of connection `cid` and what it lacks to be authorized (its row's hint).
 * @example await authorizeCheck(stores, (doc) => projectView(doc, open, new Date(), env), "con_…")
 */
export async function authorizeCheck(
  stores: Stores,
  view: (doc: ProjectDoc) => ProjectView,
  cid: string,
): Promise<{ projectId: string; missing: OAuthMissing | null }> {
  for (const doc of await stores.projects.list()) {
    if (!doc.connections?.some((x) => x.id === cid)) continue;
    const row = view(doc).connections?.find((x) => x.id === cid);
    return { projectId: doc.project.id, missing: row?.oauth_missing ?? null };
  }
  throw new HooklineError("not_found", `no connection "${cid}"`);
}

/**
 * The other sessions of a session's event and trigger: the one it re-runs (the newest before
 * it) and its re-runs (after it). Ids sort by time, so each is one scan of the project's index
 * between two times: the event's and this session's, and this session's and now (at most 1,000
 * entries each).
 * @example const { rerunOf, reruns } = await sameEvent(stores, reader, record);
 */
export async function sameEvent(stores: Stores, reader: SessionReader, rec: SessionRecord) {
  const record = (id: string) => reader.record(id);
  // The same trigger too: triggers that share a webhook start sessions of one event.
  const q = { project: rec.project_id, trigger: rec.trigger_name, search: rec.event_id };
  const bounds = { limit: 20, budget: 1000 };
  const mine = idTime(rec.id) ?? 0;
  const since = idTime(rec.event_id) ?? mine;
  const [before, after] = await Promise.all([
    scanSessions(stores.sessionIndex, record, { ...q, since, until: mine }, bounds),
    scanSessions(stores.sessionIndex, record, { ...q, since: mine }, bounds),
  ]);
  const earlier = rec.rerun_of ?? before.sessions.find((s) => s.id < rec.id)?.id ?? null;
  const reruns = after.sessions
    .filter((s) => s.id > rec.id)
    .reverse()
    .map((s) => ({ id: s.id, state: s.state }));
  return { rerunOf: earlier, reruns };
}
