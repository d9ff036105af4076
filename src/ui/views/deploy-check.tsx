import type { ReplayReport } from "../../wire/replay-report.ts";
import { replayLines } from "../../wire/replay-report.ts";
import type { ProjectSummary } from "../data.ts";
import { shortTime } from "./format.ts";
import { Block, Layout, type Viewer } from "./layout.tsx";

const OUTCOMES = {
  passed: "passed: no session in flight diverges; the deploy went ahead",
  forced: "forced: a session in flight diverges, and the deploy went ahead (--force)",
  stopped: "stopped: a session in flight diverges; the deploy did not happen, nothing changed",
};

/**
 * A project's deploy page: its active deployment and the latest replay check of its deploys
 * (`cli deploy --check-replay`), the same report the API answers: each session that diverges
 * (the step, what the journal has, what the new code does), and the lines the CLI printed.
 * @example c.html(<DeployPage viewer={viewer} project={summary} report={report} />)
 */
export function DeployPage(p: {
  viewer: Viewer;
  project: ProjectSummary;
  report: ReplayReport | null;
}) {
  const { project, report } = p;
  const base = `/ui/projects/${encodeURIComponent(project.id)}`;
  return (
    <Layout title={`${project.name}: deploys`} nav="projects" viewer={p.viewer}>
      <h1>
        Deploys of <a href={base}>{project.name}</a>
      </h1>
      <dl class="facts">
        <dt>Active deployment</dt>
        <dd class="mono">{project.active_deployment_id ?? "none"}</dd>
      </dl>
      <h2 id="replay-check">Replay check</h2>
      {report ? (
        <ReportView report={report} />
      ) : (
        <p>
          No replay check yet. <code>npx cli deploy --check-replay</code> replays the project's
          durable sessions against the new code before it goes live.
        </p>
      )}
    </Layout>
  );
}

function ReportView({ report }: { report: ReplayReport }) {
  const bad = report.outcome === "passed" ? "ok" : "bad";
  return (
    <>
      <dl class="facts">
        <dt>Checked</dt>
        <dd>{shortTime(report.at)}</dd>
        <dt>Build</dt>
        <dd class="mono">{report.build_id}</dd>
        <dt>Outcome</dt>
        <dd id="replay-outcome" class={bad}>
          {OUTCOMES[report.outcome]}
        </dd>
        <dt>Replayed</dt>
        <dd>
          {report.checked.in_flight} in flight, {report.checked.ended} ended
          {report.not_checked ? `, ${report.not_checked} not checked` : ""}
        </dd>
        {report.deployment_id && (
          <>
            <dt>Deployment</dt>
            <dd class="mono">{report.deployment_id}</dd>
          </>
        )}
      </dl>
      {report.diverging.length > 0 && (
        <table aria-labelledby="replay-check" id="diverging">
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">State</th>
              <th scope="col">Step</th>
              <th scope="col">The journal has</th>
              <th scope="col">The new code</th>
            </tr>
          </thead>
          <tbody>
            {report.diverging.map((d) => (
              <tr>
                <td>
                  <a class="mono" href={`/ui/sessions/${encodeURIComponent(d.session_id)}`}>
                    {d.session_id}
                  </a>
                </td>
                <td>{d.in_flight ? "in flight" : d.state}</td>
                <td>{d.step}</td>
                <td class="mono">{d.journal}</td>
                <td class={d.unknown ? "muted" : "bad"}>
                  {d.unknown ? "could not be checked: " : ""}
                  {d.code}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Block label="As the CLI printed it">{replayLines(report).join("\n")}</Block>
    </>
  );
}
