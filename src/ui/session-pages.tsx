/**
 * The session pages under /ui/sessions: the list (filtered, paged, live over server-sent
 * events), one session's timeline (live too), and its stop and re-run buttons.
 */
import type { Context, Hono } from "hono";
import { HooklineError } from "../errors.ts";
import { rerunFrom } from "../routes/api/rerun.ts";
import { isRange, RANGE_MS, type Range } from "../stats/overview.ts";
import type { UiAuth } from "./auth.ts";
import { bulkRerunPages } from "./bulk-rerun.tsx";
import { SESSION_STATES, type SessionState, type UiData } from "./data.ts";
import { checkedPost, PAGE_SIZE, projectOf, type UiEnv } from "./page-kit.ts";
import { sessionListStream, sessionStream } from "./streams.tsx";
import { SessionDetailPage } from "./views/session.tsx";
import { type ListQuery, SessionsPage, type StateCounts } from "./views/sessions.tsx";

/** The list's filters and cursor from the query string; a bad one is a bad_request. */
async function sessionQuery(data: UiData, c: Context): Promise<ListQuery> {
  const state = c.req.query("state") || undefined;
  if (state && !SESSION_STATES.includes(state as SessionState)) {
    throw new HooklineError("bad_request", `state must be one of ${SESSION_STATES.join(", ")}`);
  }
  const ref = c.req.query("project") || undefined;
  const project = ref ? (await projectOf(data, ref)).project.id : undefined;
  const trigger = (project && c.req.query("trigger")) || undefined;
  const cursor = c.req.query("cursor") || undefined;
  if (cursor && !/^ses_[0-9a-z]{26}$/.test(cursor))
    throw new HooklineError("bad_request", "bad cursor");
  const word = c.req.query("range") || undefined;
  if (word && !isRange(word))
    throw new HooklineError("bad_request", "range must be hour, day or week");
  const range = word as Range | undefined;
  const search = c.req.query("q")?.trim().slice(0, 200) || undefined;
  return {
    project,
    trigger,
    state: state as SessionState | undefined,
    cursor,
    limit: PAGE_SIZE,
    ...(range && { range, since: Date.now() - RANGE_MS[range] }),
    ...(search && { search }),
  };
}

/** The counts above the list: ended ones over the range (the counters), live ones now (the index). */
async function stateCounts(data: UiData, q: ListQuery): Promise<StateCounts> {
  const [o, now] = await Promise.all([
    data.overview(q.range ?? "week"),
    data.liveCounts(q.project),
  ]);
  const out: StateCounts = { ...now, completed: 0, error: 0, stopped: 0, over: q.range ?? "week" };
  for (const t of o.triggers) {
    if (q.project && t.project_id !== q.project) continue;
    if (q.trigger && t.trigger !== q.trigger) continue;
    out.completed += t.completed;
    out.error += t.error;
    out.stopped += t.stopped;
  }
  return out;
}

/** @example sessionPages(app, data, auth) // after the cookie check */
export function sessionPages(app: Hono<UiEnv>, data: UiData, auth: UiAuth): void {
  const post = checkedPost(auth);
  app.get("/sessions", async (c) => {
    const query = await sessionQuery(data, c);
    const [page, projects, view, counts] = await Promise.all([
      data.listSessions(query),
      data.listProjects(),
      query.project ? data.project(query.project) : null,
      stateCounts(data, query),
    ]);
    return c.html(
      <SessionsPage
        viewer={c.get("viewer")}
        projects={projects}
        triggers={view?.triggers ?? []}
        query={query}
        limit={PAGE_SIZE}
        counts={counts}
        {...page}
      />,
    );
  });
  app.get("/sessions/stream", async (c) => sessionListStream(c, data, await sessionQuery(data, c)));
  bulkRerunPages(app, data, auth);
  app.get("/sessions/:id", async (c) => {
    const detail = await data.session(c.req.param("id"));
    if (!detail) throw new HooklineError("not_found", `session "${c.req.param("id")}" not found`);
    return c.html(<SessionDetailPage viewer={c.get("viewer")} detail={detail} />);
  });
  app.get("/sessions/:id/stream", async (c) => {
    const from = Number(c.req.query("from") ?? "0");
    if (!Number.isSafeInteger(from) || from < 0) throw new HooklineError("bad_request", "bad from");
    const id = c.req.param("id");
    // A stream of no session would stay open with nothing to say.
    if (!(await data.session(id)))
      throw new HooklineError("not_found", `session "${id}" not found`);
    return sessionStream(c, data, id, from);
  });
  app.post("/sessions/:id/stop", async (c) => {
    await post(c);
    await data.stop(c.req.param("id"));
    return c.redirect(`/ui/sessions/${encodeURIComponent(c.req.param("id"))}`, 303);
  });
  app.post("/sessions/:id/rerun", async (c) => {
    await post(c);
    // `?from=failure` (the failed step's button) or `?from=N`; none: the whole handler again.
    const from = c.req.query("from");
    if (from !== undefined && !/^(failure|\d{1,9})$/.test(from))
      throw new HooklineError("bad_request", 'from must be "failure" or a step number');
    const rec = await data.rerun(c.req.param("id"), rerunFrom(from));
    return c.redirect(`/ui/sessions/${encodeURIComponent(rec.id)}`, 303);
  });
}
