import { attemptText } from "../../wire/attempt-words.ts";
import type { JournalView, SessionLogEntry } from "../data.ts";
import { bodyFromBase64, duration, prettyBody, shortTime } from "./format.ts";

const When = ({ t }: { t: string }) => (
  <time class="when" datetime={t}>
    {shortTime(t).slice(11)}
  </time>
);

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
export function EntryItem({ e }: { e: SessionLogEntry }) {
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
        <li data-kind="activity">
          <When t={e.t} />
          <Kind>activity</Kind>
          <code>{e.function}</code> {duration(e.duration_ms)}{" "}
          {e.ok ? <span class="ok">ok</span> : <span class="bad">error</span>}
          {e.retry && <span class="muted"> ({attemptText(e.retry, e.ok)})</span>}
          {e.replayed && <span class="muted"> (replayed)</span>}
          {e.error && <pre class="bad">{e.error}</pre>}
        </li>
      );
    case "outcome":
      return (
        <li data-kind="outcome">
          <When t={e.t} />
          <Kind>http_outcome</Kind>
          {e.status_code}
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
        </li>
      );
    case "event":
      return (
        <li data-kind="event">
          <When t={e.t} />
          <Kind>event received</Kind>
          {e.event_id ? <code>{e.event_id}</code> : <span class="muted">timed out</span>}
        </li>
      );
  }
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
      {s.kind} {s.what && <code>{s.what}</code>}{" "}
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

/**
 * The whole timeline: log entries in order, with the journal steps placed where the latest
 * run started (steps carry no times; the latest run is where they were replayed or recorded).
 * @example <Timeline log={entries} journal={steps} />
 */
export function Timeline(p: { log: SessionLogEntry[]; journal: JournalView[] }) {
  let at = -1;
  p.log.forEach((e, i) => {
    if (e.kind === "state" && e.state === "running") at = i;
  });
  const items = p.log.map((e) => <EntryItem e={e} />);
  const steps = p.journal.map((s) => <JournalItem s={s} />);
  items.splice(at + 1, 0, ...steps);
  return (
    <ol id="timeline" class="timeline" aria-label="Timeline">
      {items}
    </ol>
  );
}
