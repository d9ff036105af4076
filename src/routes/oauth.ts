import { randomBytes } from "node:crypto";
import { type Context, Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { Logger } from "../log.ts";
import { type OAuthService, Refusal, startPath, ticketValid } from "../oauth/index.ts";
import { STATE_TTL_MS } from "../oauth/states.ts";
import { tokenMatches } from "./auth.ts";
import { requestOrigin } from "./forwarded.ts";

/** The cookie that binds an authorization to the browser that started it. */
const COOKIE = "hookline_oauth";

/** What the OAuth routes are given. */
export interface OAuthRouteParts {
  oauth: OAuthService;
  log: Logger;
  /** Required to start outside dev mode: as a bearer token, or through a ticket it signed. */
  apiToken?: string | undefined;
  /** The service's external URL (SVC_PUBLIC_URL, else its listening address); absent: the request's origin. */
  publicUrl?: (() => string) | undefined;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** A page for the browser: no token, no code and no state is ever put in it. */
function page(c: Context, status: number, title: string, text: string) {
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
  c.header("Content-Security-Policy", "default-src 'none'");
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>` +
    `<body><main><h1>${esc(title)}</h1><p id="detail">${esc(text)}</p></main></body></html>`;
  return c.html(html, status as 200);
}

/**
 * `GET /oauth/start/{integration}?cid=<connection id>`: sends the browser to the provider's
 * consent page; `GET /oauth/redirect/{integration}`: the provider's callback (AutoKitteh's
 * paths, so an OAuth app registered for AutoKitteh keeps working; for github, the App's install
 * page and its setup URL, `installation_id` and `setup_action` in the query). Outside dev mode the start
 * needs the API token (a bearer header) or a ticket a holder of it made (`&ticket=`); with the
 * header and `&link=1` it answers `{"link": …}`, a start link with a ticket, for a browser.
 * @example app.route("/oauth", oauthRoutes({ oauth, log, apiToken }));
 */
export function oauthRoutes(p: OAuthRouteParts): Hono {
  const app = new Hono();
  app.get("/start/:integration", async (c) => {
    const integration = c.req.param("integration");
    const cid = c.req.query("cid") ?? "";
    const bearer =
      p.apiToken !== undefined && tokenMatches(c.req.header("authorization"), p.apiToken);
    const ticket = c.req.query("ticket") ?? "";
    if (p.apiToken && !bearer && !ticketValid(p.apiToken, cid, ticket, Date.now())) {
      return page(c, 401, "Sign-in needed", "this start link needs the API token, or a fresh link");
    }
    const base = p.publicUrl?.() ?? requestOrigin(c);
    if (c.req.query("link") === "1") {
      // A ticket starts one authorization; it does not make more tickets.
      if (p.apiToken && !bearer) return page(c, 401, "Sign-in needed", "links need the API token");
      try {
        await p.oauth.flow.target(cid, integration);
      } catch (e) {
        if (!(e instanceof Refusal)) throw e;
        return c.json(
          { type: "about:blank", title: e.title, status: e.status, detail: e.message },
          e.status,
          { "content-type": "application/problem+json" },
        );
      }
      return c.json({ link: base + startPath(integration, cid, p.apiToken) });
    }
    const cookie = getCookie(c, COOKIE) || randomBytes(32).toString("base64url");
    try {
      const { url } = await p.oauth.flow.start(cid, integration, base.replace(/\/$/, ""), cookie);
      setCookie(c, COOKIE, cookie, {
        path: "/oauth",
        httpOnly: true,
        // Lax: the provider's redirect back is a top-level navigation from its site.
        sameSite: "Lax",
        secure: base.startsWith("https:"),
        maxAge: STATE_TTL_MS / 1000,
      });
      c.header("Cache-Control", "no-store");
      return c.redirect(url, 302);
    } catch (e) {
      return refused(c, e, p.log);
    }
  });
  app.get("/redirect/:integration", async (c) => {
    const q = c.req.query();
    const { state, code, error, installation_id, setup_action } = q;
    const cb = { state, code, error, installation_id, setup_action };
    try {
      const done = await p.oauth.flow.finish(c.req.param("integration"), cb, getCookie(c, COOKIE));
      const what = `${done.project}/${done.connection} is authorized with ${done.provider}.`;
      return page(c, 200, "Connected", `${what} You may close this page.`);
    } catch (e) {
      return refused(c, e, p.log);
    }
  });
  return app;
}

function refused(c: Context, e: unknown, log: Logger) {
  if (e instanceof Refusal) {
    log.warn(`oauth ${c.req.param("integration")}: refused (${e.status}): ${e.message}`);
    return page(c, e.status, e.title, `${e.message}. Nothing was changed.`);
  }
  log.error("oauth: the authorization failed", e);
  return page(c, 500, "Authorization failed", "the service could not finish it; see its log");
}
