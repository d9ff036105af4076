import type { Context } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HooklineError } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import { CSS, JS } from "./assets.ts";
import { uiAuth } from "./auth.ts";
import { SESSION_STATES, type SessionQuery, type SessionState, type UiData } from "./data.ts";
import { csrfForm, safeNext, signInForm, testForm } from "./forms.ts";
import { sessionListStream, sessionStream } from "./streams.tsx";
import { ErrorPage, Layout, type Viewer } from "./views/layout.tsx";
import { ProjectPage, ProjectsPage, TriggerPage } from "./views/projects.tsx";
import { SessionPage } from "./views/session.tsx";
import { SessionsPage } from "./views/sessions.tsx";

export interface UiOptions {
  data: UiData;
  /** Undefined in dev mode: no sign-in. */
  apiToken?: string;
  log?: Logger;
}

type Env = { Variables: { viewer: Viewer; nonce: string } };

/** Scripts and styles from this server only: injected markup could run nothing. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const PAGE_SIZE = 50;

function SignIn(p: { next: string; error?: string }) {
  return (
    <Layout title="Sign in" viewer={null}>
      <h1>Sign in</h1>
      <p>
        Paste the API token (<code>npx cli config where</code> shows where <code>cli up</code> keeps
        it, or <code>SVC_API_TOKEN</code>).
      </p>
      {p.error && (
        <p class="bad" role="alert">
          {p.error}
        </p>
      )}
      <form method="post" action="/ui/sign-in">
        <input type="hidden" name="next" value={p.next} />
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required />{" "}
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  );
}

/**
 * The web UI, mounted at /ui: projects, triggers (with a test-request form), sessions (live
 * over server-sent events), one session's timeline; stop and re-run. Outside dev mode a
 * sign-in with the API token sets the cookie every page needs.
 * @example app.route("/ui", uiRoutes({ data: createUiData(…), apiToken }))
 */
export function uiRoutes(opts: UiOptions) {
  const { data } = opts;
  const log = opts.log ?? silentLogger;
  const auth = uiAuth(opts.apiToken);
  const app = new Hono<Env>();

  app.onError((err, c) => {
    const known = err instanceof HooklineError ? err : null;
    if (!known) log.error(`ui ${c.req.method} ${c.req.path}`, err);
    const status = (known?.status ?? 500) as 500;
    const title = known?.toProblem().title ?? "Internal server error";
    const detail = known?.message ?? "Something went wrong; the service log has the details.";
    return c.html(
      <ErrorPage viewer={c.get("viewer") ?? null} title={title} detail={detail} />,
      status,
    );
  });
  app.use("*", async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
    c.header("X-Frame-Options", "DENY");
    if (!c.res.headers.has("cache-control")) c.header("Cache-Control", "no-store");
  });
  app.use(
    "*",
    bodyLimit({
      maxSize: 2 * 1024 * 1024,
      onError: () => {
        throw new HooklineError("payload_too_large", "the form exceeds 2 MiB");
      },
    }),
  );

  app.get("/assets/app.css", (c) =>
    c.body(CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "max-age=300" }),
  );
  app.get("/assets/app.js", (c) =>
    c.body(JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "max-age=300",
    }),
  );

  app.get("/sign-in", (c) => {
    if (!auth.required) return c.redirect("/ui", 303);
    return c.html(<SignIn next={safeNext(c.req.query("next") ?? "")} />);
  });
  app.post("/sign-in", async (c) => {
    if (!auth.required) return c.redirect("/ui", 303);
    // No cookie yet to tie a CSRF token to: the Origin check alone guards sign-in.
    const { token, next } = await signInForm(c);
    try {
      auth.checkOrigin(c);
    } catch (e) {
      return c.html(<SignIn next={next} error={(e as Error).message} />, 403);
    }
    if (!auth.tokenMatches(token)) {
      return c.html(<SignIn next={next} error="That is not the API token." />, 401);
    }
    auth.issue(c);
    return c.redirect(next, 303);
  });

  // Everything below needs a cookie: signed in, or (dev mode) handed out on the first visit.
  app.use("*", async (c, next) => {
    let nonce = auth.nonce(c);
    if (!nonce) {
      if (auth.required) {
        if (c.req.method === "GET" && !c.req.path.endsWith("/stream")) {
          const url = new URL(c.req.url);
          const to = encodeURIComponent(safeNext(url.pathname + url.search));
          return c.redirect(`/ui/sign-in?next=${to}`, 303);
        }
        throw new HooklineError("unauthorized", "sign in first");
      }
      nonce = auth.issue(c);
    }
    c.set("nonce", nonce);
    c.set("viewer", { csrf: auth.csrf(nonce), signedIn: auth.required });
    return next();
  });
  const post = async (c: Context<Env>) => {
    const form = await csrfForm(c);
    auth.checkPost(c, c.get("nonce"), form._csrf);
  };

  app.post("/sign-out", async (c) => {
    await post(c);
    auth.clear(c);
    return c.redirect(auth.required ? "/ui/sign-in" : "/ui", 303);
  });

  app.get("/", (c) => c.redirect("/ui/sessions", 303));
  app.get("/projects", async (c) =>
    c.html(<ProjectsPage viewer={c.get("viewer")} projects={await data.listProjects()} />),
  );
  const projectOf = async (ref: string) => {
    const view = await data.project(ref);
    if (!view) throw new HooklineError("not_found", `project "${ref}" not found`);
    return view;
  };
  const origin = (c: Context) => new URL(c.req.url).origin;
  app.get("/projects/:ref", async (c) =>
    c.html(
      <ProjectPage
        viewer={c.get("viewer")}
        view={await projectOf(c.req.param("ref"))}
        origin={origin(c)}
      />,
    ),
  );
  const triggerOf = async (c: Context<Env>) => {
    const view = await projectOf(c.req.param("ref")!);
    const name = c.req.param("name")!;
    const trigger = view.triggers.find((t) => t.name === name);
    if (!trigger) throw new HooklineError("not_found", `trigger "${name}" not found`);
    return { project: view.project, trigger };
  };
  const emptyForm = (method: string) => ({
    method: method ? method.toUpperCase() : "POST",
    suffix: "",
    headers: "Content-Type: application/json",
    body: '{"message": "hello"}',
  });
  app.get("/projects/:ref/triggers/:name", async (c) => {
    const { project, trigger } = await triggerOf(c);
    const form = emptyForm(trigger.event_type);
    return c.html(
      <TriggerPage
        viewer={c.get("viewer")}
        project={project}
        trigger={trigger}
        origin={origin(c)}
        form={form}
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

  async function sessionQuery(c: Context): Promise<SessionQuery> {
    const state = c.req.query("state") || undefined;
    if (state && !SESSION_STATES.includes(state as SessionState)) {
      throw new HooklineError("bad_request", `state must be one of ${SESSION_STATES.join(", ")}`);
    }
    const ref = c.req.query("project") || undefined;
    const project = ref ? (await projectOf(ref)).project.id : undefined;
    const trigger = (project && c.req.query("trigger")) || undefined;
    const cursor = c.req.query("cursor") || undefined;
    if (cursor && !/^ses_[0-9a-z]{26}$/.test(cursor))
      throw new HooklineError("bad_request", "bad cursor");
    return { project, trigger, state: state as SessionState | undefined, cursor, limit: PAGE_SIZE };
  }
  app.get("/sessions", async (c) => {
    const query = await sessionQuery(c);
    const [page, projects, view] = await Promise.all([
      data.listSessions(query),
      data.listProjects(),
      query.project ? data.project(query.project) : null,
    ]);
    return c.html(
      <SessionsPage
        viewer={c.get("viewer")}
        projects={projects}
        triggers={view?.triggers ?? []}
        query={query}
        limit={PAGE_SIZE}
        {...page}
      />,
    );
  });
  app.get("/sessions/stream", async (c) => sessionListStream(c, data, await sessionQuery(c)));
  app.get("/sessions/:id", async (c) => {
    const detail = await data.session(c.req.param("id"));
    if (!detail) throw new HooklineError("not_found", `session "${c.req.param("id")}" not found`);
    return c.html(<SessionPage viewer={c.get("viewer")} detail={detail} />);
  });
  app.get("/sessions/:id/stream", async (c) => {
    const from = Number(c.req.query("from") ?? "0");
    if (!Number.isSafeInteger(from) || from < 0) throw new HooklineError("bad_request", "bad from");
    const id = c.req.param("id");
    // A stream of no session would stay open with nothing to say.
    if (!(await data.session(id)))
      throw new HooklineError("not_found", `session "${id}" not found`);
    return sessionStream(c, data, id, from);
  });
  app.post("/sessions/:id/stop", async (c) => {
    await post(c);
    await data.stop(c.req.param("id"));
    return c.redirect(`/ui/sessions/${encodeURIComponent(c.req.param("id"))}`, 303);
  });
  app.post("/sessions/:id/rerun", async (c) => {
    await post(c);
    const rec = await data.rerun(c.req.param("id"));
    return c.redirect(`/ui/sessions/${encodeURIComponent(rec.id)}`, 303);
  });
  app.all("*", (c) => {
    if (c.req.path === "/ui/") return c.redirect("/ui/sessions", 303);
    throw new HooklineError("not_found", "no such page");
  });
  return app;
}
