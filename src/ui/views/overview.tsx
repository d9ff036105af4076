/**
 * The overview at /ui: sessions by state over the chosen range (a stacked SVG chart), what runs
 * and is parked now, throughput, each trigger's failure rate and p50/p95 duration, and the
 * latest errors, each linked. Live: the script swaps `#overview` for the stream's new copy.
 */
import { RANGES, type Range } from "../../stats/overview.ts";
import type { Overview } from "../data.ts";
import { StackedBars } from "./chart.tsx";
import { duration, shortTime } from "./format.ts";
import { LastError } from "./health.tsx";
import { Layout, type Viewer } from "./layout.tsx";

const RANGE_WORDS: Record<Range, string> = {
  hour: "Last hour",
  day: "Last day",
  week: "Last week",
};

const iso = (ms: number) => new Date(ms).toISOString();
const pct = (r: number | null) =>
  r === null ? "—" : r === 0 ? "0%" : `${(r * 100).toFixed(r < 0.1 ? 1 : 0)}%`;
const ms = (v: number | null) => (v === null ? "—" : `≤ ${duration(v)}`);
const sessionHref = (id: string) => `/ui/sessions/${encodeURIComponent(id)}`;
const triggerHref = (projectId: string, trigger: string) =>
  `/ui/projects/${encodeURIComponent(projectId)}/triggers/${encodeURIComponent(trigger)}`;

/** A number and its noun, the noun plural unless the number is 1. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The page's changing part, also sent by the live stream.
 * @example <OverviewBody o={overview} />
 */
export function OverviewBody({ o }: { o: Overview }) {
  const ended = o.totals.completed + o.totals.error + o.totals.stopped;
  const minutes = (o.to - o.from) / 60_000 || 1;
  const bar = o.bar_ms === 60_000 ? "minute" : "hour";
  return (
    <div id="overview">
      <ul class="stats" aria-label="Now and over the range">
        <li>
          <span class="num" id="live-running">
            {String(o.live.running)}
          </span>{" "}
          running now
        </li>
        <li>
          <span class="num" id="live-parked">
            {String(o.live.parked)}
          </span>{" "}
          parked now
        </li>
        {(["completed", "error", "stopped"] as const).map((s) => (
          <li>
            <span class={`num state-${s}`} id={`total-${s}`}>
              {String(o.totals[s])}
            </span>{" "}
            {s}
          </li>
        ))}
        <li>
          <span class="num" id="total-created">
            {String(o.totals.created)}
          </span>{" "}
          created
        </li>
        <li>
          <span class="num" id="throughput">
            {(ended / minutes).toFixed(ended / minutes < 10 ? 2 : 0)}
          </span>{" "}
          ended a minute
        </li>
      </ul>
      <figure class="chart-box">
        <figcaption>
          Sessions ended per {bar}, by state ({shortTime(iso(o.from))} to {shortTime(iso(o.to))}{" "}
          UTC){" "}
          <span class="legend">
            <span class="key fill-completed" /> completed <span class="key fill-error" /> error{" "}
            <span class="key fill-stopped" /> stopped
          </span>
        </figcaption>
        <StackedBars bars={o.bars} barMs={o.bar_ms} title={`Sessions ended per ${bar}`} />
      </figure>
      <h2>Triggers</h2>
      <TriggerTable o={o} />
      <h2>Latest errors</h2>
      {o.errors.length === 0 ? (
        <p class="muted" id="no-errors">
          No session failed in this range.
        </p>
      ) : (
        <table id="errors">
          <thead>
            <tr>
              <th>Ended</th>
              <th>Session</th>
              <th>Project</th>
              <th>Trigger</th>
              <th>Error</th>
            </tr>
          </thead>
          <tbody>
            {o.errors.map((e) => (
              <tr>
                <td>{shortTime(iso(e.at))}</td>
                <td>
                  <a class="mono" href={sessionHref(e.id)}>
                    {e.id}
                  </a>
                </td>
                <td>{e.project_name}</td>
                <td>{e.trigger || "(started by hand)"}</td>
                <td class="bad">{e.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function TriggerTable({ o }: { o: Overview }) {
  if (o.triggers.length === 0) {
    return <p class="muted">No session was created or ended in this range.</p>;
  }
  return (
    <table id="triggers">
      <thead>
        <tr>
          <th>Project</th>
          <th>Trigger</th>
          <th>Ended</th>
          <th>Failure rate</th>
          <th>p50</th>
          <th>p95</th>
          <th>Last run</th>
          <th>Last error</th>
        </tr>
      </thead>
      <tbody>
        {o.triggers.map((t) => (
          <tr data-trigger={`${t.project_name}/${t.trigger}`}>
            <td>
              <a href={`/ui/projects/${encodeURIComponent(t.project_id)}`}>{t.project_name}</a>
            </td>
            <td>
              {t.trigger ? (
                <a href={triggerHref(t.project_id, t.trigger)}>{t.trigger}</a>
              ) : (
                "(started by hand)"
              )}
            </td>
            <td class="ended">{String(t.ended)}</td>
            <td class={t.error > 0 ? "bad failure" : "failure"}>{pct(t.failure_rate)}</td>
            <td>{ms(t.p50)}</td>
            <td>{ms(t.p95)}</td>
            <td>
              {t.last ? (
                <a href={sessionHref(t.last.id)}>
                  {shortTime(iso(t.last.at))} ({t.last.state})
                </a>
              ) : (
                "—"
              )}
            </td>
            <LastError error={t.last_error} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * @example c.html(<OverviewPage viewer={viewer} o={overview} />)
 */
export function OverviewPage(p: { viewer: Viewer; o: Overview }) {
  return (
    <Layout
      title="Overview"
      nav="overview"
      viewer={p.viewer}
      liveOverview={`/ui/overview/stream?range=${p.o.range}`}
    >
      <h1>Overview</h1>
      <nav class="ranges" aria-label="Range">
        {(Object.keys(RANGES) as Range[]).map((r) => (
          <a href={`/ui?range=${r}`} aria-current={r === p.o.range ? "page" : undefined}>
            {RANGE_WORDS[r]}
          </a>
        ))}
      </nav>
      <OverviewBody o={p.o} />
      <p class="muted">
        From counters kept as sessions are created and end (<a href="/ui/sessions">every session</a>
        ); durations are the bucket a session fell in (≤ the bound shown).
      </p>
    </Layout>
  );
}
