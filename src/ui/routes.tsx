import type { Context, Next } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HooklineError } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import { startPath } from "../oauth/index.ts";
import { httpStatus, toProblem } from "../routes/problem.ts";
import { CSS, JS } from "./assets.ts";
import { type UiAuth, uiAuth } from "./auth.ts";
import type { OAuthMissing, UiData } from "./data.ts";
import { safeNext, signInForm } from "./forms.ts";
import { overviewPages } from "./overview-pages.tsx";
import { checkedPost, type UiEnv } from "./page-kit.ts";
import { projectPages } from "./project-pages.tsx";
import { sessionPages } from "./session-pages.tsx";
import { OAuthHint } from "./views/connections.tsx";
import { ErrorPage, Layout, type Viewer } from "./views/layout.tsx";
import { SettingsPage } from "./views/settings.tsx";

export interface UiOptions {
  data: UiData;
  /** Undefined in dev mode: no sign-in. */
  apiToken?: string;
  log?: Logger;
}

/** Scripts and styles from this server only: injected markup could run nothing. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

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

function AuthorizeMissing(p: { viewer: Viewer; projectId: string; m: OAuthMissing }) {
  return (
    <Layout title="OAuth app not configured" nav="projects" viewer={p.viewer}>
      <h1>OAuth app not configured</h1>
      <OAuthHint m={p.m} id="oauth-hint" />
      <p>
        <a id="back" href={`/ui/projects/${encodeURIComponent(p.projectId)}#connections`}>
          Back to the project
        </a>
      </p>
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
  const auth = uiAuth(opts.apiToken);
  const app = new Hono<UiEnv>();
  safeguards(app, opts.log ?? silentLogger);

  app.get("/assets/app.css", (c) =>
    c.body(CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "max-age=300" }),
  );
  app.get("/assets/app.js", (c) =>
    c.body(JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "max-age=300",
    }),
  );
  signInPages(app, auth);

  // Everything below needs a cookie: signed in, or (dev mode) handed out on the first visit.
  app.use("*", cookieCheck(auth));
  const post = checkedPost(auth);
  app.post("/sign-out", async (c) => {
    await post(c);
    auth.clear(c);
    return c.redirect(auth.required ? "/ui/sign-in" : "/ui", 303);
  });
  overviewPages(app, data);
  // The connection row's "Authorize with …": a start link signed for this signed-in browser;
  // with no OAuth app to use, a page that says what to set, with a way back.
  app.get("/authorize/:integration/:cid", async (c) => {
    const cid = c.req.param("cid");
    const { projectId, missing } = await data.authorizeCheck(cid);
    if (missing) {
      return c.html(
        <AuthorizeMissing viewer={c.get("viewer")} projectId={projectId} m={missing} />,
        409,
      );
    }
    return c.redirect(startPath(c.req.param("integration"), cid, opts.apiToken), 303);
  });
  app.get("/settings", async (c) =>
    c.html(<SettingsPage viewer={c.get("viewer")} about={await data.about()} />),
  );
  projectPages(app, data, auth);
  sessionPages(app, data, auth);
  app.all("*", (c) => {
    if (c.req.path === "/ui/") return c.redirect("/ui", 303);
    throw new HooklineError("not_found", "no such page");
  });
  return app;
}

/**
 * What every response of the UI gets: errors as a page (the unexpected ones logged), the
 * security headers, no caching unless a route says so, and forms of at most 2 MiB.
 */
function safeguards(app: Hono<UiEnv>, log: Logger): void {
  app.onError((err, c) => {
    const known = err instanceof HooklineError ? err : null;
    if (!known) log.error(`ui ${c.req.method} ${c.req.path}`, err);
    const status = (known ? httpStatus(known.code) : 500) as 500;
    const title = (known && toProblem(known).title) ?? "Internal server error";
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
        throw new HooklineError("too_large", "the form exceeds 2 MiB");
      },
    }),
  );
}

/** The sign-in page and its form; in dev mode (no token) both lead straight to the UI. */
function signInPages(app: Hono<UiEnv>, auth: UiAuth): void {
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
}

/**
 * The cookie every page past sign-in needs. Without one: a page (GET, not a stream) is sent
 * to sign in, anything else is unauthorized; in dev mode one is handed out.
 */
const cookieCheck = (auth: UiAuth) => async (c: Context<UiEnv>, next: Next) => {
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
};
