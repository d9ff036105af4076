import { prefixStorage } from "unstorage";
import type { BuildFiles, ProjectDoc, SessionRecord, SessionState } from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import { checkSession, type ReplayVerdict } from "../sessions/replay-check.ts";
import type { Stores } from "../storage/records.ts";
import type { DivergingSession, ReplayReport } from "../wire/replay-report.ts";

/** In-flight sessions one check replays at most; past it the rest are counted as not checked. */
export const MAX_IN_FLIGHT = 1000;
/** Ended sessions a check may ask for (`--check-replay N`), at most. */
export const MAX_ENDED = 1000;
/** Ended sessions' records read at most to find the newest durable ones (the rest may not be). */
const MAX_ENDED_SCAN = 5000;
/** Checks that run at once: each is a Python process. */
const AT_ONCE = 2;
const IN_FLIGHT: SessionState[] = ["running", "created"];
const ENDED: SessionState[] = ["completed", "error", "stopped"];

/** What a replay check of a deploy runs on. */
export interface CheckParts {
  stores: Stores;
  runtime: Runtime;
  secrets: SecretBox;
}

/**
 * Replays the project's durable sessions against a deploy's new build before it is activated:
 * every one in flight (up to MAX_IN_FLIGHT) and the newest `ended` that ended, each in a
 * sandboxed process (activities answered from the journal, no network, a time bound). The
 * report's outcome is `stopped` when one in flight diverges, unless `force`.
 * @example const report = await checkDeployReplay(parts, { next, build, ended: 20, force: false });
 */
export async function checkDeployReplay(
  parts: CheckParts,
  opts: { next: ProjectDoc; build: BuildFiles; ended: number; force: boolean },
): Promise<ReplayReport> {
  const { stores } = parts;
  // A redeploy keeps the project's id; a new project has no sessions to list.
  const projectId = opts.next.project.id;
  const inFlight = await durableSessions(stores, projectId, IN_FLIGHT, MAX_IN_FLIGHT);
  const ended = await durableSessions(stores, projectId, ENDED, Math.min(opts.ended, MAX_ENDED));
  const diverging: DivergingSession[] = [];
  let notChecked = inFlight.more;
  await eachAtOnce([...inFlight.sessions, ...ended.sessions], AT_ONCE, async (record) => {
    const verdict = await checkOne(parts, record, opts.next, opts.build);
    if (verdict === null) notChecked++;
    else if (!verdict.ok) {
      const { step, journal, code, unknown } = verdict;
      const in_flight = IN_FLIGHT.includes(record.state);
      diverging.push({
        session_id: record.id,
        state: record.state,
        in_flight,
        step,
        journal,
        code,
      });
      if (unknown) diverging.at(-1)!.unknown = true;
    }
  });
  diverging.sort(
    (a, b) => Number(b.in_flight) - Number(a.in_flight) || (a.session_id < b.session_id ? -1 : 1),
  );
  const blocked = diverging.some((d) => d.in_flight && !d.unknown);
  return {
    project: opts.next.project.name,
    build_id: opts.build.id,
    at: new Date().toISOString(),
    checked: { in_flight: inFlight.sessions.length, ended: ended.sessions.length },
    not_checked: notChecked,
    diverging,
    outcome: !blocked ? "passed" : opts.force ? "forced" : "stopped",
  };
}

/** One session's check; null when it cannot be checked (its event is no longer stored). */
async function checkOne(
  parts: CheckParts,
  record: SessionRecord,
  doc: ProjectDoc,
  build: BuildFiles,
): Promise<ReplayVerdict | null> {
  const steps = await parts.stores.journals.list(record.id);
  if (steps.length === 0) return { ok: true }; // nothing on record: any code takes it
  const event = await parts.stores.events.get(record.event_id);
  if (!event) return null;
  const read = (seq: number, count: number) => parts.stores.journals.parts(record.id, seq, count);
  return checkSession(parts, { record, event, steps, upTo: steps.length, build, doc, parts: read });
}

/**
 * The project's durable sessions in `states`, newest first, at most `limit` (and how many more
 * were in flight). Records are read one by one from the index: non-durable ones are passed over,
 * and of the ended ones no more than MAX_ENDED_SCAN are read.
 */
async function durableSessions(
  stores: Stores,
  projectId: string,
  states: SessionState[],
  limit: number,
): Promise<{ sessions: SessionRecord[]; more: number }> {
  const entries = (await Promise.all(states.map((s) => stores.sessionIndex.entries(projectId, s))))
    .flat()
    .sort((a, b) => (a.id < b.id ? 1 : -1));
  const sessions: SessionRecord[] = [];
  let more = 0;
  const scan = states === IN_FLIGHT ? entries : entries.slice(0, MAX_ENDED_SCAN);
  for (const e of scan) {
    const record = await stores.sessions.get(e.id);
    if (!record?.durable || !states.includes(record.state)) continue;
    if (sessions.length < limit) sessions.push(record);
    else if (states === IN_FLIGHT) more++;
    else break; // the newest ended ones are enough
  }
  return { sessions, more };
}

/**
 * How many durable sessions of the project are in flight (a deploy without the check says so).
 * @example await inFlightDurable(stores, "prj_…") // 2
 */
export async function inFlightDurable(stores: Stores, projectId: string): Promise<number> {
  return (await durableSessions(stores, projectId, IN_FLIGHT, Number.POSITIVE_INFINITY)).sessions
    .length;
}

/** Runs `fn` over `items`, `n` at a time. */
async function eachAtOnce<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}

/**
 * The latest replay check of each project (the UI's deploy page and the API show it), kept
 * under `replay-checks:<project_id>`: one document a project, replaced by the next check.
 * @example await replayReports(stores.storage).put("prj_…", report);
 */
export function replayReports(storage: Stores["storage"]) {
  const reports = prefixStorage(storage, "replay-checks");
  return {
    get: (projectId: string) => reports.getItem<ReplayReport>(projectId),
    put: (projectId: string, report: ReplayReport) => reports.setItem(projectId, report),
  };
}
