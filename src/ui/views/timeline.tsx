import type { ActivityInFlight } from "../../model/run-records.ts";
import { attemptText } from "../../wire/attempt-words.ts";
import { stepWhat } from "../../wire/journal-view.ts";
import type { JournalView, SessionLogEntry } from "../data.ts";
import { bodyFromBase64, duration, prettyBody } from "./format.ts";

/** A log time to the millisecond (`07:40:12.345`), in UTC as every time of the UI. */
const When = ({ t }: { t: string }) => (
  <time class="when" datetime={t}>
    {t.slice(11, 23)}
  </time>
);

/** Where an item sits on the session's span, for its waterfall bar (epoch ms). */
export interface Span {
  from: number;
  to: number;
  /** The session still runs: the span ends now, and its bars say so. */
  running?: boolean;
}

/**
 * A waterfall bar: where an item ran within the session's span, drawn as SVG (the page's
 * CSP allows no inline style). A zero-length item is a tick. While the session runs, the span
 * ends now (the page's time, or the entry's as it streams in) and the bar is marked running.
 */
function Bar(p: { span: Span; start: number; end: number; ok?: boolean; grow?: boolean }) {
  const total = Math.max(1, p.span.to - p.span.from);
  const x = Math.min(1000, Math.max(0, ((p.start - p.span.from) / total) * 1000));
  const w = Math.max(2, Math.min(1000 - x, ((p.end - p.start) / total) * 1000));
  const running = p.span.running === true;
  return (
    <svg
      class={running ? "wf wf-running" : "wf"}
      data-running={running ? "true" : undefined}
      viewBox="0 0 1000 10"
      preserveAspectRatio="none"
      role={running ? "img" : undefined}
      aria-hidden={running ? undefined : "true"}
      aria-label={running ? "session running: drawn up to now" : undefined}
      data-grow-from={p.grow ? String(p.span.from) : undefined}
      data-grow-start={p.grow ? String(p.start) : undefined}
    >
      {running && <title>session running: drawn up to now</title>}
      <rect class="wf-track" x="0" y="0" width="1000" height="10" />
      <rect class={p.ok === false ? "wf-bad" : "wf-ok"} x={x} y="0" width={w} height="10" />
    </svg>
  );
}

const Kind = ({ children }: { children: string }) => <span class="kind">{children}</span>;

function headerText(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");
}

/**
 * One log entry as an item of the session's timeline (the live stream sends the same).
 * @example <EntryItem e={{ t, kind: "print", text: "hi\n", stream: "stdout" }} />
 */
export function EntryItem({
  e,
  span,
  step,
}: {
  e: SessionLogEntry;
  span?: Span;
  step?: JournalView;
}) {
  const stepNote = step && (
    <span class="muted" data-step={String(step.seq)}>
      {" "}
      · step {step.seq}
      {step.replayed ? " (replayed)" : " (live)"}
    </span>
  );
  switch (e.kind) {
    case "print":
      return (
        <li class="print" data-kind="print">
          <When t={e.t} />
          <Kind>{e.stream === "stderr" ? "stderr" : "print"}</Kind>
          <pre>{e.text.endsWith("\n") ? e.text.slice(0, -1) : e.text}</pre>
        </li>
      );
    case "state":
      return (
        <li data-kind="state">
          <When t={e.t} />
          <Kind>state</Kind>
          <span class={`state state-${e.state}`}>{e.state}</span>
          {e.detail && <span class="muted"> {e.detail}</span>}
        </li>
      );
    case "activity":
      return (
        <li data-kind="activity" data-ms={String(e.duration_ms)}>
          <When t={e.t} />
          <Kind>activity</Kind>
          <code>{e.function}</code> {duration(e.duration_ms)}{" "}
          {e.ok ? <span class="ok">ok</span> : <span class="bad">error</span>}
          {e.retry && <span class="muted"> ({attemptText(e.retry, e.ok)})</span>}
          {e.replayed && !step && <span class="muted"> (replayed)</span>}
          {stepNote}
          {span && (
            <Bar
              span={span}
              start={Date.parse(e.t) - e.duration_ms}
              end={Date.parse(e.t)}
              ok={e.ok}
            />
          )}
          {e.error && <pre class="bad">{e.error}</pre>}
        </li>
      );
    case "outcome":
      return (
        <li data-kind="outcome">
          <When t={e.t} />
          <Kind>http_outcome</Kind>
          {e.status_code}
          {stepNote}
          {e.more ? " (more=True: log only)" : e.sent ? " (sent as the response)" : " (not sent)"}
          <pre>{headerText(e.headers) || "(no headers)"}</pre>
          <pre>{prettyBody(bodyFromBase64(e.body) ?? (e.body === null ? "" : null))}</pre>
        </li>
      );
    case "warning":
      return (
        <li data-kind="warning">
          <When t={e.t} />
          <Kind>warning</Kind>
          <span class="warn">{e.text}</span>
        </li>
      );
    case "subscribe":
      return (
        <li data-kind="subscribe">
          <When t={e.t} />
          <Kind>subscribe</Kind>
          <code>{e.source}</code>
          {e.filter && (
            <>
              {" "}
              filter <code>{e.filter}</code>
            </>
          )}{" "}
          <span class="muted mono">{e.subscription_id}</span>
          {stepNote}
        </li>
      );
    case "event":
      return (
        <li data-kind="event">
          <When t={e.t} />
          <Kind>event received</Kind>
          {e.event_id ? <code>{e.event_id}</code> : <span class="muted">timed out</span>}
          {stepNote}
        </li>
      );
  }
}

/** The id of an activity's row while it runs (its number in its process). */
export const inFlightId = (n: number) => `in-flight-${n}`;

/**
 * An activity running now: its row until the entry that ends it takes its place. Its bar runs
 * from its start up to now, and grows (the page's script moves its end with the clock).
 * @example <InFlightItem a={{ id: 1, function: "shop.pack", t }} span={span} />
 */
export function InFlightItem({ a, span }: { a: ActivityInFlight; span?: Span }) {
  const start = Date.parse(a.t);
  return (
    <li id={inFlightId(a.id)} data-kind="activity-running">
      <When t={a.t} />
      <Kind>activity</Kind>
      <code>{a.function}</code>{" "}
      <span data-since={a.t}>{duration(Math.max(0, Date.now() - start))}</span>{" "}
      <span class="state state-running">running</span>
      {span && (
        <Bar span={{ ...span, running: true }} start={start} end={Math.max(span.to, start)} grow />
      )}
    </li>
  );
}

/**
 * A durable session's journal step in the timeline.
 * @example <JournalItem s={{ seq: 0, kind: "activity", what: "h.f", ok: true, replayed: true }} />
 */
export function JournalItem({ s }: { s: JournalView }) {
  return (
    <li data-kind="journal">
      <span class="when">step {s.seq}</span>
      <Kind>journal</Kind>
      {s.kind} {stepWhat(s) && <code>{stepWhat(s)}</code>}{" "}
      {s.retry_at ? (
        <span class="warn">waiting to retry (next at {s.retry_at})</span>
      ) : s.ok ? (
        <span class="ok">ok</span>
      ) : (
        <span class="bad">error</span>
      )}{" "}
      {s.attempts && <span class="muted">{s.attempts} attempts </span>}
      <span class="muted">{s.replayed ? "(replayed)" : "(live)"}</span>
    </li>
  );
}

/** The log entry kind a journal step of each kind is logged as. */
const LOGGED_AS: Partial<Record<JournalView["kind"], SessionLogEntry["kind"]>> = {
  activity: "activity",
  subscribe: "subscribe",
  next_event: "event",
  outcome: "outcome",
};

/**
 * The journal steps matched to the log entries of the latest run that logged them, in order
 * per kind (the n-th activity step is the run's n-th activity entry); the rest stay unmatched.
 */
function matchSteps(log: SessionLogEntry[], journal: JournalView[], from: number) {
  const byEntry = new Map<number, JournalView>();
  const queues = new Map<string, JournalView[]>();
  const unmatched: JournalView[] = [];
  for (const s of journal) {
    const kind = LOGGED_AS[s.kind];
    if (!kind || s.retry_at) unmatched.push(s);
    else queues.set(kind, [...(queues.get(kind) ?? []), s]);
  }
  log.forEach((e, i) => {
    if (i <= from) return;
    const step = queues.get(e.kind)?.shift();
    if (step) byEntry.set(i, step);
  });
  for (const q of queues.values()) unmatched.push(...q);
  return { byEntry, unmatched: unmatched.sort((a, b) => a.seq - b.seq) };
}

/**
 * The whole timeline, one list: log entries in order with millisecond times, each activity
 * with a bar of when it ran within the session (a waterfall), each journal step on the entry
 * it logged (`step N`); steps no entry logged (a timer, a pending retry) where the latest run
 * started.
 * @example <Timeline log={entries} journal={steps} />
 */
export function Timeline(p: {
  log: SessionLogEntry[];
  journal: JournalView[];
  span?: Span;
  inFlight?: ActivityInFlight[];
}) {
  let at = -1;
  p.log.forEach((e, i) => {
    if (e.kind === "state" && e.state === "running") at = i;
  });
  const { byEntry, unmatched } = matchSteps(p.log, p.journal, at);
  const span = p.span ?? spanOf(p.log);
  const items = p.log.map((e, i) => <EntryItem e={e} span={span} step={byEntry.get(i)} />);
  const steps = unmatched.map((s) => <JournalItem s={s} />);
  items.splice(at + 1, 0, ...steps);
  for (const a of p.inFlight ?? []) items.push(<InFlightItem a={a} span={span} />);
  return (
    <ol id="timeline" class="timeline" aria-label="Timeline">
      {items}
    </ol>
  );
}

/** The span of a log: its first entry to its last (an activity's start may come before). */
function spanOf(log: SessionLogEntry[]): Span | undefined {
  if (log.length === 0) return undefined;
  let from = Date.parse(log[0]!.t);
  let to = from;
  for (const e of log) {
    const t = Date.parse(e.t);
    from = Math.min(from, e.kind === "activity" ? t - e.duration_ms : t);
    to = Math.max(to, t);
  }
  return { from, to };
}
