import type { ScheduleData, WebhookData } from "../../model/records.ts";
import { BY_HAND } from "../../wire/trigger-words.ts";
import {
  ENDED_STATES,
  type SessionDetail,
  type SessionLogEntry,
  type SessionRecord,
} from "../data.ts";
import { bodyFromBase64, prettyBody, shortTime } from "./format.ts";
import { Block, Csrf, Layout, type Viewer } from "./layout.tsx";
import { FailureBanner, Reruns, spanOf } from "./session-links.tsx";
import { Duration, StateBadge } from "./sessions.tsx";
import { Timeline } from "./timeline.tsx";

/**
 * The facts that change while a session runs (the live stream sends this again).
 * @example <SessionStatus rec={record} />
 */
export function SessionStatus({ rec }: { rec: SessionRecord }) {
  return (
    <>
      {rec.error && <FailureBanner rec={rec} error={rec.error} />}
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <StateBadge state={rec.state} />
        </dd>
        <dt>Project</dt>
        <dd>
          <a href={`/ui/projects/${encodeURIComponent(rec.project_id)}`}>{rec.project_name}</a>
        </dd>
        <dt>Trigger</dt>
        <dd>
          {rec.manual ? (
            <span id="started-by-hand">none: {BY_HAND}</span>
          ) : (
            <a
              href={`/ui/projects/${encodeURIComponent(rec.project_id)}/triggers/${encodeURIComponent(rec.trigger_name)}`}
            >
              {rec.trigger_name}
            </a>
          )}{" "}
          <span class="muted">
            ({rec.is_sync ? "sync" : "async"}, {rec.durable ? "durable" : "not durable"})
          </span>
        </dd>
        <dt>Entry point</dt>
        <dd class="mono">{rec.entry}</dd>
        <dt>Created</dt>
        <dd>{shortTime(rec.created_at)}</dd>
        <dt>Started</dt>
        <dd>{shortTime(rec.started_at)}</dd>
        <dt>Ended</dt>
        <dd>{shortTime(rec.ended_at)}</dd>
        <dt>Duration</dt>
        <dd>
          <Duration rec={rec} />
        </dd>
        {rec.traceparent && (
          <>
            <dt>Trace</dt>
            <dd class="mono" id="trace-id">
              {rec.traceparent.split("-")[1]}
            </dd>
          </>
        )}
        {rec.rerun_of && (
          <>
            <dt>Re-run of</dt>
            <dd>
              <a class="mono" href={`/ui/sessions/${encodeURIComponent(rec.rerun_of)}`}>
                {rec.rerun_of}
              </a>
              {rec.rerun_from_step
                ? rec.rerun_from_step === 1
                  ? " (its first step reused)"
                  : ` (its first ${rec.rerun_from_step} steps reused)`
                : ""}
            </dd>
          </>
        )}
        {rec.attempts > 0 && (
          <>
            <dt>Resumed</dt>
            <dd>{rec.attempts === 1 ? "once" : `${rec.attempts} times`}</dd>
          </>
        )}
      </dl>
    </>
  );
}

/**
 * The response the session gave (its final outcome) and its error with the traceback.
 * @example <SessionEndSection rec={record} log={entries} />
 */
export function SessionEndSection({ rec, log }: { rec: SessionRecord; log: SessionLogEntry[] }) {
  const outcomes = log.filter(
    (e): e is Extract<SessionLogEntry, { kind: "outcome" }> => e.kind === "outcome",
  );
  const final = outcomes.find((o) => o.sent) ?? outcomes.filter((o) => !o.more).at(-1);
  return (
    <>
      <h2 id="outcome">HTTP outcome</h2>
      {final ? (
        <div class="card">
          <p>
            Status <strong id="outcome-status">{final.status_code}</strong>
            {final.sent ? " (sent as the response)" : " (not sent: the trigger is asynchronous)"}
          </p>
          <Block label="Outcome headers">
            {Object.entries(final.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join("\n") || "(no headers)"}
          </Block>
          <Block label="Outcome body" id="outcome-body">
            {prettyBody(bodyFromBase64(final.body) ?? (final.body === null ? "" : null))}
          </Block>
        </div>
      ) : (
        <p>{ENDED_STATES.has(rec.state) ? "No outcome." : "None yet."}</p>
      )}
    </>
  );
}

function EventView({ detail }: { detail: SessionDetail }) {
  const ev = detail.event;
  if (!ev) return <p>The event is no longer stored (retention).</p>;
  if (detail.record.manual) {
    return (
      <div class="card">
        <p>
          <strong>started by hand</strong> <span class="muted mono">{ev.id}</span>
        </p>
        <Block label="Inputs (event.data)" id="event-inputs">
          {JSON.stringify(ev.data, null, 2)}
        </Block>
      </div>
    );
  }
  if (ev.connection) {
    return (
      <div class="card">
        <p>
          <strong>{ev.connection}</strong> <code>{ev.event_type}</code>{" "}
          <span class="muted mono">{ev.id}</span>
        </p>
        <Block label="Event data">{JSON.stringify(ev.data, null, 2)}</Block>
      </div>
    );
  }
  const d = ev.data as WebhookData | ScheduleData;
  if (!("method" in d)) {
    return (
      <div class="card">
        <p>
          <strong>schedule</strong> <code>{d.schedule}</code> ({d.timezone}){" "}
          <span class="muted mono">{ev.id}</span>
        </p>
        <p>
          due {d.due}, fired {d.fired}
          {d.missed ? `, ${d.missed} missed slots folded into this one` : ""}
        </p>
      </div>
    );
  }
  return (
    <div class="card">
      <p>
        <strong>{d.method}</strong> <code>{d.url.path}</code>{" "}
        <span class="muted mono">{ev.id}</span>
      </p>
      <Block label="Event headers">
        {Object.entries(d.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n")}
      </Block>
      <Block label="Event body" id="event-body">
        {d.body.json !== null && d.body.json !== undefined
          ? JSON.stringify(d.body.json, null, 2)
          : prettyBody(d.body.text)}
      </Block>
    </div>
  );
}

/**
 * One session: the event, the timeline, the outcome and error; stop and re-run.
 * @example c.html(<SessionDetailPage viewer={viewer} detail={await data.session(id)} />)
 */
export function SessionDetailPage(p: { viewer: Viewer; detail: SessionDetail }) {
  const { record: rec, log, journal } = p.detail;
  const ended = ENDED_STATES.has(rec.state);
  const base = `/ui/sessions/${encodeURIComponent(rec.id)}`;
  return (
    <Layout
      title={rec.id}
      nav="sessions"
      viewer={p.viewer}
      live={ended ? undefined : `${base}/stream?from=${log.length}`}
      ended={ended}
    >
      <h1>
        Session <span class="mono">{rec.id}</span>
      </h1>
      <div class="row">
        {!ended && (
          <form id="stop-form" method="post" action={`${base}/stop`}>
            <Csrf viewer={p.viewer} />
            <button type="submit">Stop</button>
          </form>
        )}
        <form method="post" action={`${base}/rerun`}>
          <Csrf viewer={p.viewer} />
          <button type="submit" class="secondary">
            Re-run
          </button>
        </form>
        {rec.durable && rec.state === "error" && (
          <form id="rerun-failure-form" method="post" action={`${base}/rerun?from=failure`}>
            <Csrf viewer={p.viewer} />
            <button
              type="submit"
              class="secondary"
              title="Reuse its journal up to the step that failed, and run the current code from there"
            >
              Re-run from the failed step
            </button>
          </form>
        )}
      </div>
      <section id="session-status" aria-label="Status">
        <SessionStatus rec={rec} />
      </section>
      <Reruns detail={p.detail} />
      <h2>Event</h2>
      <EventView detail={p.detail} />
      <h2>Timeline</h2>
      <Timeline
        log={log}
        journal={journal}
        span={spanOf(rec, log)}
        inFlight={ended ? [] : p.detail.inFlight}
      />
      <section id="session-end" aria-live="polite">
        <SessionEndSection rec={rec} log={log} />
      </section>
    </Layout>
  );
}
