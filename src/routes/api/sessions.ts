import { Hono } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type * as v from "valibot";
import { HooklineError } from "../../errors.ts";
import type { SessionLogEntry, SessionRecord, SessionState } from "../../model/records.ts";
import type { SessionManager } from "../../sessions/manager.ts";
import type { Stores } from "../../storage/records.ts";
import { type SessionQuery, scanSessions } from "../../storage/session-scan.ts";
import { journalView } from "../../wire/journal-view.ts";
import { serve } from "../validate.ts";
import { api } from "./contract.ts";
import { rerunFrom, rerunSession } from "./rerun.ts";
import { runRoute } from "./run.ts";
import { findProject } from "./views.ts";

const ENDED = new Set<SessionState>(["completed", "error", "stopped"]);

/** Sessions: list, one, its log and prints, stop, and a live watch over server-sent events. */
export function sessionRoutes(stores: Stores, sessions: SessionManager) {
  const app = new Hono();

  async function current(
    id: string,
  ): Promise<{ record: SessionRecord; entries: SessionLogEntry[] }> {
    const live = sessions.live(id);
    if (live) return { record: live.record, entries: live.log.entries };
    const record = await stores.sessions.get(id);
    if (!record) throw new HooklineError("not_found", `session "${id}" not found`);
    return { record, entries: await stores.logs.get(id) };
  }

  serve(app, api.sessions, async (c, { query }) => c.json(await list(stores, sessions, query)));
  serve(app, api.session, async (c, { params }) =>
    c.json({ session: (await current(params.id)).record }),
  );
  serve(app, api.sessionLog, async (c, { params }) => {
    const { record, entries } = await current(params.id);
    const journal = record.durable ? await stores.journals.list(record.id) : [];
    return c.json({
      session: record,
      entries,
      journal: journal.map((s) => journalView(s, record)),
    });
  });
  serve(app, api.sessionPrints, async (c, { params }) => {
    const { record, entries } = await current(params.id);
    const prints = entries.flatMap((e) =>
      e.kind === "print" ? [{ t: e.t, text: e.text, stream: e.stream }] : [],
    );
    return c.json({ session_id: record.id, state: record.state, prints });
  });
  serve(app, api.stopSession, async (c, { params }) => {
    await current(params.id);
    return c.json({ session: await sessions.stop(params.id) });
  });
  runRoute(app, stores, sessions);
  // A new session from the same stored event (see rerunSession).
  serve(app, api.rerunSession, async (c, { params, query }) => {
    const session = await rerunSession(stores, sessions, params.id, rerunFrom(query.from));
    return c.json({ session }, 201);
  });
  serve(app, api.watchSession, async (c, { params }) => {
    const { id } = params;
    const { record, entries } = await current(id);
    return streamSSE(c, (stream) => watch(stream, stores, sessions, record, entries));
  });
  return app;
}

type ListQuery = v.InferOutput<NonNullable<(typeof api.sessions)["query"]>>;

/**
 * `GET /sessions`: one page read from the session index newest first, through the UI's own
 * filter (`scanSessions`), older than `before` when given. Its cost is one bounded index range
 * and the records shown, whatever the store holds: nothing is counted, so `total` is given only
 * when nothing was left out, and `next` (the `before` of the next page) when something was.
 */
async function list(stores: Stores, sessions: SessionManager, query: ListQuery) {
  const { state, limit, trigger, since, until, q, before } = query;
  const project = query.project ? (await findProject(stores, query.project)).project.id : undefined;
  // A running session's record in storage may trail the live one by a write.
  const fresh = async (id: string) => sessions.live(id)?.record ?? stores.sessions.get(id);
  const time = (t: string | undefined) => (t === undefined ? undefined : Date.parse(t));
  const filter = { trigger, state, since: time(since), until: time(until), search: q };
  return listPage(stores, fresh, { project, ...filter, cursor: before }, limit);
}

/** Index entries (each a record read) one filtered list looks at, at most. */
export const TRIGGER_SCAN_BUDGET = 10_000;

/**
 * One page: `limit` sessions and one more, to say whether rows were left out. A trigger filter
 * or a search reads records until the page is full, and stops at TRIGGER_SCAN_BUDGET index
 * entries: `more` then says there may be more, and `next` goes on from where it stopped.
 */
async function listPage(
  stores: Stores,
  fresh: (id: string) => Promise<SessionRecord | null>,
  q: SessionQuery,
  limit: number,
) {
  const budget = Math.max(TRIGGER_SCAN_BUDGET, limit + 1);
  const log = (id: string) => stores.logs.get(id);
  const page = await scanSessions(stores.sessionIndex, fresh, q, { limit: limit + 1, budget, log });
  const shown = page.sessions.slice(0, limit);
  const full = page.sessions.length > limit;
  const more = full || page.next !== null;
  if (!more) return { sessions: shown, more, total: shown.length };
  return { sessions: shown, more, next: full ? shown[limit - 1]!.id : page.next };
}

/**
 * A session's log as server-sent events: what it has logged, then each entry as it comes, then
 * `end` with its final record. A session running elsewhere is followed through the manager's
 * end signal, and what it logged meanwhile is read from storage at the end.
 */
async function watch(
  stream: SSEStreamingApi,
  stores: Stores,
  sessions: SessionManager,
  record: SessionRecord,
  entries: SessionLogEntry[],
): Promise<void> {
  const id = record.id;
  const live = sessions.live(id);
  const queue: SessionLogEntry[] = [...entries];
  let sent = 0;
  let end: SessionRecord | null = ENDED.has(record.state) ? record : null;
  let wake: (() => void) | null = null;
  const unlisten = live?.log.listen((e) => {
    queue.push(e);
    wake?.();
  });
  let closed = false;
  if (!end) {
    // Here or on another instance: either way the manager says when it ends.
    void sessions.whenEnded(id).then((r) => {
      end = r ?? record;
      wake?.();
    });
  }
  stream.onAbort(() => {
    closed = true;
    wake?.();
  });
  try {
    for (;;) {
      while (queue.length) {
        await stream.writeSSE({ data: JSON.stringify(queue.shift()) });
        sent++;
      }
      if (end || closed) break;
      await new Promise<void>((r) => {
        wake = r;
      });
      wake = null;
    }
    if (closed) return;
    if (!live) {
      // It ran elsewhere: what it logged since we started is in storage now.
      for (const e of (await stores.logs.get(id)).slice(sent)) {
        await stream.writeSSE({ data: JSON.stringify(e) });
      }
    }
    await stream.writeSSE({ event: "end", data: JSON.stringify(end ?? record) });
  } finally {
    unlisten?.();
  }
}
