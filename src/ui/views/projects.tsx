import type { Range, TriggerHealth } from "../../stats/overview.ts";
import type {
  ProjectSummary,
  ProjectView,
  TestResponse,
  TriggerRecord,
  TriggerRow,
} from "../data.ts";
import { Connections } from "./connections.tsx";
import { prettyBody, shortTime } from "./format.ts";
import { Health } from "./health.tsx";
import { Block, Csrf, Layout, type Viewer } from "./layout.tsx";
import { emptyRunForm, RunForm, type RunFormInput } from "./run-form.tsx";
import { eventCell, flags, noTestRequest, SourceFacts, StartsOn } from "./trigger-facts.tsx";
import { Vars } from "./vars.tsx";

const triggerHref = (p: ProjectSummary, t: TriggerRecord) =>
  `/ui/projects/${encodeURIComponent(p.id)}/triggers/${encodeURIComponent(t.name)}`;

/**
 * All projects.
 * @example c.html(<ProjectsPage viewer={viewer} projects={await data.listProjects()} />)
 */
export function ProjectsPage(p: { viewer: Viewer; projects: ProjectSummary[] }) {
  return (
    <Layout title="Projects" nav="projects" viewer={p.viewer}>
      <h1>Projects</h1>
      {p.projects.length === 0 ? (
        <p>
          No projects yet. Deploy one with <code>npx cli deploy --manifest manifest.yaml</code>.
        </p>
      ) : (
        <table>
          <caption class="sr-only">Projects</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Triggers</th>
              <th scope="col">Deployment</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {p.projects.map((prj) => (
              <tr>
                <td>
                  <a href={`/ui/projects/${encodeURIComponent(prj.id)}`}>{prj.name}</a>
                  {prj.display_name && <span class="display-name muted"> {prj.display_name}</span>}
                </td>
                <td>{prj.triggers}</td>
                <td class="mono">{prj.active_deployment_id ?? "none active"}</td>
                <td>{shortTime(prj.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}

/**
 * One project: its triggers with what starts them (webhook URL, schedule or connection), its
 * connections, and its vars (no secret values).
 * @example c.html(<ProjectPage viewer={viewer} view={view} origin="http://127.0.0.1:9980" />)
 */
export function ProjectPage(p: {
  viewer: Viewer;
  view: ProjectView;
  origin: string;
  /** The Run form as last sent, and why it was refused. */
  run?: { form: RunFormInput; error?: string };
  health?: { range: Range; rows: TriggerHealth[] };
}) {
  const { project, triggers, vars } = p.view;
  const deployed = project.active_deployment_id !== null;
  return (
    <Layout title={project.name} nav="projects" viewer={p.viewer}>
      <h1>Project {project.name}</h1>
      {project.display_name && <p class="display-name muted">{project.display_name}</p>}
      <p>
        <a href={`/ui/sessions?project=${encodeURIComponent(project.id)}`}>Its sessions</a> ·{" "}
        <a href={`/ui/projects/${encodeURIComponent(project.id)}/deploy`}>Deploys</a>
      </p>
      <h2 id="triggers">Triggers</h2>
      <table aria-labelledby="triggers">
        <thead>
          <tr>
            <th scope="col">Trigger</th>
            <th scope="col">Starts on</th>
            <th scope="col">Event</th>
            <th scope="col">Kind</th>
            <th scope="col">Calls</th>
            <th scope="col">Filter</th>
          </tr>
        </thead>
        <tbody>
          {triggers.map((t) => (
            <tr>
              <td>
                <a href={triggerHref(project, t)}>{t.name}</a>
              </td>
              <td>
                <StartsOn t={t} origin={p.origin} deployed={deployed} />
              </td>
              <td>{eventCell(t)}</td>
              <td>{flags(t)}</td>
              <td class="mono">{t.call ?? "(subscription source)"}</td>
              <td class="mono">{t.filter || "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {p.health && (
        <Health
          rows={p.health.rows}
          range={p.health.range}
          here={`/ui/projects/${encodeURIComponent(project.id)}`}
          names={[
            ...new Set([
              ...triggers.filter((t) => t.call).map((t) => t.name),
              ...p.health.rows.map((r) => r.trigger),
            ]),
          ]}
        />
      )}
      <RunForm
        viewer={p.viewer}
        view={p.view}
        form={p.run?.form ?? emptyRunForm}
        error={p.run?.error}
      />
      <Connections view={p.view} origin={p.origin} />
      <Vars vars={vars} />
    </Layout>
  );
}

export interface TestForm {
  method: string;
  suffix: string;
  headers: string;
  body: string;
}

const METHODS = ["POST", "GET", "PUT", "PATCH", "DELETE"];

/**
 * One trigger: what starts it (webhook URL and method, schedule and its next firing, or
 * connection), its kind (`connection (inactive)` for one that never fires), what it does, and
 * for a webhook a form that sends it a test request (other kinds have no URL to send to).
 * @example c.html(<TriggerPage viewer={viewer} project={p} trigger={t} origin={o} form={form} />)
 */
export function TriggerPage(p: {
  viewer: Viewer;
  project: ProjectSummary;
  trigger: TriggerRow;
  origin: string;
  form: TestForm;
  result?: TestResponse;
  error?: string;
  health?: { range: Range; rows: TriggerHealth[] };
}) {
  const { project, trigger: t, form } = p;
  const noTest = noTestRequest(t);
  return (
    <Layout title={`${project.name}:${t.name}`} nav="projects" viewer={p.viewer}>
      <h1>
        Trigger {t.name} <span class="muted">of </span>
        <a href={`/ui/projects/${encodeURIComponent(project.id)}`}>{project.name}</a>
      </h1>
      <dl class="facts">
        <SourceFacts t={t} origin={p.origin} deployed={project.active_deployment_id !== null} />
        <dt>Kind</dt>
        <dd>{flags(t)}</dd>
        <dt>Calls</dt>
        <dd class="mono">{t.call ?? "(none: a subscription source)"}</dd>
        <dt>Filter</dt>
        <dd class="mono">{t.filter || "—"}</dd>
      </dl>
      {p.health && (
        <Health
          rows={p.health.rows}
          range={p.health.range}
          here={triggerHref(project, t)}
          names={[t.name]}
        />
      )}
      {noTest === null ? (
        <TestRequestForm
          viewer={p.viewer}
          action={`${triggerHref(project, t)}/test#response`}
          form={form}
        />
      ) : (
        <p id="no-test">{noTest}</p>
      )}
      {p.error && (
        <p class="bad" role="alert">
          {p.error}
        </p>
      )}
      {p.result && <TestResult result={p.result} />}
    </Layout>
  );
}

/** The test request form of a webhook trigger's page: it posts to the trigger's `/test`. */
function TestRequestForm(p: { viewer: Viewer; action: string; form: TestForm }) {
  const { form } = p;
  return (
    <>
      <h2 id="test">Send a test request</h2>
      <form method="post" action={p.action} aria-labelledby="test">
        <Csrf viewer={p.viewer} />
        <div class="row">
          <div>
            <label for="method">Method</label>
            <select id="method" name="method">
              {METHODS.map((m) => (
                <option selected={m === form.method}>{m}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="suffix">Path after the webhook URL (optional)</label>
            <input
              id="suffix"
              name="suffix"
              class="mono"
              value={form.suffix}
              placeholder="/x?y=1"
            />
          </div>
        </div>
        <label for="headers">Headers, one "Name: value" a line</label>
        <textarea id="headers" name="headers">
          {form.headers}
        </textarea>
        <label for="body">Body</label>
        <textarea id="body" name="body">
          {form.body}
        </textarea>
        <p>
          <button type="submit">Send</button>
        </p>
      </form>
    </>
  );
}

function TestResult({ result }: { result: TestResponse }) {
  return (
    <section class="card" aria-labelledby="response" id="test-result">
      <h2 id="response" tabindex={-1}>
        Response: <span class={result.status < 400 ? "ok" : "bad"}>{result.status}</span>
      </h2>
      {result.session_id ? (
        <p>
          Session:{" "}
          <a id="test-session" href={`/ui/sessions/${encodeURIComponent(result.session_id)}`}>
            {result.session_id}
          </a>
        </p>
      ) : (
        <p>No session started.</p>
      )}
      <Block label="Response headers">
        {result.headers.map(([k, v]) => `${k}: ${v}`).join("\n")}
      </Block>
      <Block label="Response body">{prettyBody(result.body)}</Block>
    </section>
  );
}
