/**
 * The project pages under /ui/projects: the list, one project, its deploy page (the latest
 * replay check), one trigger, and the trigger's test-request form (sent through the service's
 * own webhook route).
 */
import type { Context, Hono } from "hono";
import { HooklineError } from "../errors.ts";
import { isRange } from "../stats/overview.ts";
import type { UiAuth } from "./auth.ts";
import type { UiData } from "./data.ts";
import { runForm, testForm } from "./forms.ts";
import { origin, projectOf, type UiEnv } from "./page-kit.ts";
import { DeployPage } from "./views/deploy-check.tsx";
import { ProjectPage, ProjectsPage, TriggerPage } from "./views/projects.tsx";
import { emptyRunForm, type RunFormInput } from "./views/run-form.tsx";

/** The form a trigger's page starts with: its own method, a small JSON body. */
const emptyForm = (method: string) => ({
  method: method ? method.toUpperCase() : "POST",
  suffix: "",
  headers: "Content-Type: application/json",
  body: '{"message": "hello"}',
});

/** @example projectPages(app, data, auth) // after the cookie check */
export function projectPages(app: Hono<UiEnv>, data: UiData, auth: UiAuth): void {
  const triggerOf = async (c: Context<UiEnv>) => {
    const view = await projectOf(data, c.req.param("ref")!);
    const name = c.req.param("name")!;
    const trigger = view.triggers.find((t) => t.name === name);
    if (!trigger) throw new HooklineError("not_found", `trigger "${name}" not found`);
    return { project: view.project, trigger };
  };

  app.get("/projects", async (c) =>
    c.html(<ProjectsPage viewer={c.get("viewer")} projects={await data.listProjects()} />),
  );
  app.get("/projects/:ref", async (c) => {
    const view = await projectOf(data, c.req.param("ref"));
    const health = await healthOf(data, c, view.project.id);
    return c.html(
      <ProjectPage viewer={c.get("viewer")} view={view} origin={origin(c)} health={health} />,
    );
  });
  app.get("/projects/:ref/deploy", async (c) => {
    const { project } = await projectOf(data, c.req.param("ref"));
    const report = await data.replayReport(project.id);
    return c.html(<DeployPage viewer={c.get("viewer")} project={project} report={report} />);
  });
  runPage(app, data, auth);
  app.get("/projects/:ref/triggers/:name", async (c) => {
    const { project, trigger } = await triggerOf(c);
    const form = emptyForm(trigger.event_type);
    const health = await healthOf(data, c, project.id, trigger.name);
    return c.html(
      <TriggerPage
        viewer={c.get("viewer")}
        project={project}
        trigger={trigger}
        origin={origin(c)}
        form={form}
        health={health}
      />,
    );
  });
  app.post("/projects/:ref/triggers/:name/test", async (c) => {
    const { project, trigger } = await triggerOf(c);
    const props = { viewer: c.get("viewer"), project, trigger, origin: origin(c) };
    let parsed: Awaited<ReturnType<typeof testForm>>;
    try {
      parsed = await testForm(c);
    } catch (e) {
      if (!(e instanceof HooklineError)) throw e;
      return c.html(
        <TriggerPage {...props} form={emptyForm(trigger.event_type)} error={e.message} />,
        400,
      );
    }
    auth.checkPost(c, c.get("nonce"), parsed.input._csrf);
    const result = await data.testRequest(project.id, trigger.name, {
      ...parsed.request,
      origin: origin(c),
    });
    return c.html(<TriggerPage {...props} form={parsed.input} result={result} />);
  });
}

/** A project's (or one trigger's) health over `?range=` (a day by default). */
async function healthOf(data: UiData, c: Context<UiEnv>, projectId: string, trigger?: string) {
  const word = c.req.query("range") || "day";
  if (!isRange(word)) throw new HooklineError("bad_request", "range must be hour, day or week");
  const o = await data.overview(word);
  const rows = o.triggers.filter(
    (t) => t.project_id === projectId && (trigger === undefined || t.trigger === trigger),
  );
  return { range: word, rows };
}

/**
 * The Run form's post: a session started by hand, opened at once (303 to its page); a refusal
 * (inputs that are not a JSON object, a function the deployment lacks) shows on the project
 * page, with nothing started.
 * @example runPage(app, data, auth) // after the cookie check
 */
function runPage(app: Hono<UiEnv>, data: UiData, auth: UiAuth): void {
  app.post("/projects/:ref/run", async (c) => {
    const view = await projectOf(data, c.req.param("ref"));
    const page = (form: RunFormInput, error: string) =>
      c.html(
        <ProjectPage
          viewer={c.get("viewer")}
          view={view}
          origin={origin(c)}
          run={{ form, error }}
        />,
        400,
      );
    let parsed: Awaited<ReturnType<typeof runForm>>;
    try {
      parsed = await runForm(c);
    } catch (e) {
      if (!(e instanceof HooklineError)) throw e;
      return page(emptyRunForm, e.message);
    }
    auth.checkPost(c, c.get("nonce"), parsed.csrf);
    try {
      const rec = await data.run(view.project.id, parsed.fields);
      return c.redirect(`/ui/sessions/${encodeURIComponent(rec.id)}`, 303);
    } catch (e) {
      if (!(e instanceof HooklineError) || e.code !== "bad_request") throw e;
      return page(parsed.input, e.message);
    }
  });
}
