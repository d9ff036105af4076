/**
 * Parts of a session's page: the failure banner at its top, its place among the runs of its
 * event (what it re-runs, its re-runs), and its span for the timeline's waterfall.
 */
import type { SessionDetail, SessionLogEntry, SessionRecord } from "../data.ts";
import { Block } from "./layout.tsx";
import { StateBadge } from "./sessions.tsx";

/** The failure at the top of the page: its message and the traceback's last lines. */
export function FailureBanner(p: {
  rec: SessionRecord;
  error: NonNullable<SessionRecord["error"]>;
}) {
  const tb = p.error.traceback?.trimEnd().split("\n") ?? [];
  return (
    <section class="banner" aria-labelledby="error" id="failure-banner">
      <h2 id="error" class="bad">
        Error
      </h2>
      <p class="bad" role="alert">
        {p.error.message}
      </p>
      {tb.length > 0 && (
        <details>
          <summary>Traceback ({tb.length === 1 ? "1 line" : `${tb.length} lines`})</summary>
          <Block label="Traceback">{p.error.traceback}</Block>
        </details>
      )}
    </section>
  );
}

/** This session's place among the runs of its event: what it re-runs, and its re-runs. */
export function Reruns({ detail }: { detail: SessionDetail }) {
  const { rerunOf, reruns = [] } = detail;
  const link = (id: string) => (
    <a class="mono" href={`/ui/sessions/${encodeURIComponent(id)}`}>
      {id}
    </a>
  );
  if (!rerunOf && reruns.length === 0) return null;
  return (
    <section aria-label="Re-runs" id="reruns" class="card">
      {rerunOf && rerunOf !== detail.record.rerun_of && (
        <p>A re-run of {link(rerunOf)} (the same event).</p>
      )}
      {reruns.length > 0 && (
        <>
          <p>{reruns.length === 1 ? "Re-run once:" : `Re-run ${reruns.length} times:`}</p>
          <ul>
            {reruns.map((r) => (
              <li>
                {link(r.id)} <StateBadge state={r.state} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/**
 * The session's span for the waterfall: started (or created) to ended; while it runs, to now
 * (or its last entry, if later), marked running.
 * @example spanOf(record, log) // { from, to, running: false }
 */
export function spanOf(rec: SessionRecord, log: SessionLogEntry[], now = Date.now()) {
  const from = Date.parse(rec.started_at ?? rec.created_at);
  const last = log.at(-1);
  const running = !rec.ended_at;
  const to = running ? Math.max(now, last ? Date.parse(last.t) : from) : Date.parse(rec.ended_at!);
  if (!Number.isFinite(from) || !Number.isFinite(to)) return undefined;
  // An activity replayed from an earlier run may have begun before this run started.
  let start = from;
  for (const e of log)
    if (e.kind === "activity") start = Math.min(start, Date.parse(e.t) - e.duration_ms);
  return { from: start, to: Math.max(to, from + 1), running };
}
