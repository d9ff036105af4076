/**
 * A project's or a trigger's health over a range (last run, success rate, p95, last error),
 * from the same counters as the overview (src/stats/), with the range's links.
 */
import { RANGES, type Range, type TriggerHealth } from "../../stats/overview.ts";
import { duration, shortTime } from "./format.ts";

const iso = (ms: number) => new Date(ms).toISOString();
const sessionHref = (id: string) => `/ui/sessions/${encodeURIComponent(id)}`;

/** completed / ended, as a percentage, or "—" when none ended. */
const successRate = (t: TriggerHealth) =>
  t.ended === 0 ? "—" : `${Math.round((t.completed / t.ended) * 1000) / 10}%`;

/**
 * @example <Health rows={overview.triggers.filter(…)} range="day" here="/ui/projects/prj_…" />
 */
/** A trigger's last error as a table cell: its message, linked to its session; else a dash. */
export function LastError(p: { error: { id: string; message?: string } | null | undefined }) {
  const e = p.error;
  return (
    <td>
      {e ? (
        <a class="bad" href={sessionHref(e.id)}>
          {e.message || "error"}
        </a>
      ) : (
        "—"
      )}
    </td>
  );
}

export function Health(p: { rows: TriggerHealth[]; range: Range; here: string; names?: string[] }) {
  const byName = new Map(p.rows.map((r) => [r.trigger, r]));
  const names = p.names ?? p.rows.map((r) => r.trigger);
  return (
    <section aria-labelledby="health" id="health-section">
      <h2 id="health">Health</h2>
      <nav class="ranges" aria-label="Health range">
        {(Object.keys(RANGES) as Range[]).map((r) => (
          <a href={`${p.here}?range=${r}#health`} aria-current={r === p.range ? "page" : undefined}>
            last {r}
          </a>
        ))}
      </nav>
      <table id="health-table">
        <thead>
          <tr>
            <th>Trigger</th>
            <th>Last run</th>
            <th>Ended</th>
            <th>Success rate</th>
            <th>p95</th>
            <th>Last error</th>
          </tr>
        </thead>
        <tbody>
          {names.map((name) => {
            const t = byName.get(name);
            return (
              <tr data-health={name}>
                <td>{name || "(started by hand)"}</td>
                <td>
                  {t?.last ? (
                    <a href={sessionHref(t.last.id)}>
                      {shortTime(iso(t.last.at))} ({t.last.state})
                    </a>
                  ) : (
                    <span class="muted">none in the last {p.range}</span>
                  )}
                </td>
                <td class="ended">{String(t?.ended ?? 0)}</td>
                <td class="success">{t ? successRate(t) : "—"}</td>
                <td>{t?.p95 ? `≤ ${duration(t.p95)}` : "—"}</td>
                <LastError error={t?.last_error} />
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
