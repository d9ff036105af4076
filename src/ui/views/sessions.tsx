import type { Range } from "../../stats/overview.ts";
import { startedBy } from "../../wire/trigger-words.ts";
import {
  type ProjectSummary,
  SESSION_STATES,
  type SessionQuery,
  type SessionRecord,
  type SessionState,
  type TriggerRecord,
} from "../data.ts";
import { duration, sessionDuration, shortTime } from "./format.ts";
import { Layout, type Viewer } from "./layout.tsx";

/**
 * A session state as a coloured badge.
 * @example <StateBadge state="running" />
 */
export const StateBadge = ({ state }: { state: string }) => (
  <span class={`state state-${state}`}>{state}</span>
);

/**
 * A duration that the script keeps ticking while the session runs.
 * @example <Duration rec={record} /> // "850 ms"
 */
export function Duration({ rec }: { rec: SessionRecord }) {
  const ms = sessionDuration(rec);
  if (ms === null) return <span class="muted">not started</span>;
  if (rec.ended_at || !rec.started_at) return <span>{duration(ms)}</span>;
  return <span data-since={rec.started_at}>{duration(ms)}</span>;
}

/**
 * One row of the sessions table; the live stream sends the same markup.
 * @example <SessionRow rec={record} />
 */
export function SessionRow({ rec }: { rec: SessionRecord }) {
  return (
    <tr id={`row-${rec.id}`} data-state={rec.state}>
      <td>
        <StateBadge state={rec.state} />
      </td>
      <td>
        <a class="mono" href={`/ui/sessions/${encodeURIComponent(rec.id)}`}>
          {rec.id}
        </a>
      </td>
      <td>{rec.project_name}</td>
      <td>{startedBy(rec)}</td>
      <td>{shortTime(rec.started_at ?? rec.created_at)}</td>
      <td>
        <Duration rec={rec} />
      </td>
    </tr>
  );
}

/** The list's query and the range word it came from (`hour`, `day`, `week`). */
export type ListQuery = SessionQuery & { range?: Range };

/** The counts above the list: ended over `over` (the counters), created and running now. */
export interface StateCounts {
  created: number;
  running: number;
  completed: number;
  error: number;
  stopped: number;
  over: Range;
}

export interface SessionsPageProps {
  viewer: Viewer;
  projects: ProjectSummary[];
  /** Triggers of the chosen project, for the trigger filter. */
  triggers: TriggerRecord[];
  query: ListQuery;
  counts: StateCounts;
  sessions: SessionRecord[];
  next: string | null;
  scanned: number;
  limit: number;
}

/**
 * The list's query string (`?project=…&state=…`), with another cursor or state when given.
 * @example qs({ project: "prj_…", range: "day" }) // "?project=prj_…&range=day"
 */
export function qs(q: ListQuery, cursor?: string, state = q.state): string {
  const p = new URLSearchParams();
  if (q.project) p.set("project", q.project);
  if (q.trigger) p.set("trigger", q.trigger);
  if (state) p.set("state", state);
  if (q.range) p.set("range", q.range);
  if (q.search) p.set("q", q.search);
  if (cursor) p.set("cursor", cursor);
  const s = p.toString();
  return s ? `?${s}` : "";
}

/**
 * Sessions newest first, filtered, paged by cursor; the first page follows new ones live.
 * @example c.html(<SessionsPage viewer={viewer} {...page} … />)
 */
export function SessionsPage(p: SessionsPageProps) {
  const { query } = p;
  const first = !query.cursor;
  // A search's rows are what matched; new sessions are not searched as they come.
  const live = first && !query.search;
  return (
    <Layout title="Sessions" nav="sessions" viewer={p.viewer}>
      <h1>Sessions</h1>
      <Counts query={query} counts={p.counts} />
      <form class="filters" method="get" action="/ui/sessions" aria-label="Filter sessions">
        <div>
          <label for="f-project">Project</label>
          <select id="f-project" name="project">
            <option value="">all projects</option>
            {p.projects.map((prj) => (
              <option value={prj.id} selected={prj.id === query.project}>
                {prj.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="f-trigger">Trigger</label>
          <select id="f-trigger" name="trigger" disabled={!query.project}>
            <option value="">{query.project ? "all triggers" : "choose a project first"}</option>
            {p.triggers.map((t) => (
              <option value={t.name} selected={t.name === query.trigger}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="f-state">State</label>
          <select id="f-state" name="state">
            <option value="">any state</option>
            {SESSION_STATES.map((s) => (
              <option selected={s === query.state}>{s}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="f-range">Started</label>
          <select id="f-range" name="range">
            <option value="">any time</option>
            {(["hour", "day", "week"] as const).map((r) => (
              <option value={r} selected={r === query.range}>
                in the last {r}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="f-q">Search</label>
          <input
            id="f-q"
            name="q"
            type="search"
            value={query.search ?? ""}
            placeholder="ses_…, evt_…, or text in prints and errors"
            size={36}
          />
        </div>
        <button type="submit">Filter</button>
      </form>
      {query.project && query.trigger && (p.counts.error > 0 || query.state === "error") && (
        <p>
          <a
            id="rerun-failed"
            href={`/ui/sessions/rerun-failed${qs({ ...query, range: query.range ?? "day" }, undefined, "error")}`}
          >
            Re-run all failed sessions of {query.trigger}…
          </a>
        </p>
      )}
      <table
        id="sessions"
        data-live-list={live ? `/ui/sessions/stream${qs(query)}` : undefined}
        data-limit={String(p.limit)}
      >
        <caption class="sr-only">
          Sessions, newest first{first ? "; new sessions appear as they start" : ""}
        </caption>
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Session</th>
            <th scope="col">Project</th>
            <th scope="col">Trigger</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {p.sessions.map((rec) => (
            <SessionRow rec={rec} />
          ))}
        </tbody>
      </table>
      {p.sessions.length === 0 && (
        <p id="no-sessions">
          {!first ? "No more sessions." : query.search ? "No session matches." : "No sessions yet."}
        </p>
      )}
      <nav class="pager" aria-label="Pages">
        {!first && <a href={`/ui/sessions${qs(query)}`}>Newest</a>}
        {p.next && (
          <a rel="next" href={`/ui/sessions${qs(query, p.next)}`}>
            Older sessions
          </a>
        )}
        {p.next && (query.trigger || query.search) && p.sessions.length < p.limit && (
          <span class="muted">
            Looked at {p.scanned} sessions for this page; older ones may match.
          </span>
        )}
      </nav>
    </Layout>
  );
}

const RANGE_TEXT: Record<Range, string> = { hour: "last hour", day: "last day", week: "last week" };

/** Counts per state, each a link to the list in that state. */
function Counts(p: { query: ListQuery; counts: StateCounts }) {
  const c = p.counts;
  const item = (state: SessionState, n: number, note: string) => (
    <li>
      <a
        href={`/ui/sessions${qs({ ...p.query, cursor: undefined }, undefined, state)}`}
        aria-current={p.query.state === state ? "true" : undefined}
      >
        <span class={`num state-${state}`} id={`count-${state}`}>
          {String(n)}
        </span>{" "}
        {state}
      </a>{" "}
      <span class="muted">{note}</span>
    </li>
  );
  return (
    <ul class="stats" aria-label="Sessions by state">
      {item("created", c.created, "now")}
      {item("running", c.running, "now")}
      {item("completed", c.completed, `in the ${RANGE_TEXT[c.over]}`)}
      {item("error", c.error, `in the ${RANGE_TEXT[c.over]}`)}
      {item("stopped", c.stopped, `in the ${RANGE_TEXT[c.over]}`)}
    </ul>
  );
}
