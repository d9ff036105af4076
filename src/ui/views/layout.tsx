import { raw } from "hono/html";
import type { Child } from "hono/jsx";

/** What every page knows of the visitor: the CSRF token of its forms, whether sign-out shows. */
export interface Viewer {
  csrf: string;
  /** Outside dev mode: the visitor signed in, and a sign-out button shows. */
  signedIn: boolean;
}

/**
 * A form field holding the CSRF token.
 * @example <form method="post"><Csrf viewer={viewer} />…</form>
 */
export const Csrf = ({ viewer }: { viewer: Viewer }) => (
  <input type="hidden" name="_csrf" value={viewer.csrf} />
);

export interface LayoutProps {
  title: string;
  nav?: "overview" | "projects" | "sessions" | "settings";
  viewer: Viewer | null;
  /** Extra attributes of <main> (the live session stream). */
  live?: string;
  /** The overview's live stream. */
  liveOverview?: string;
  /**
   * The session shown had ended when the page was made (`data-ended`, as the live stream sets
   * it when the end comes later).
   */
  ended?: boolean;
  children?: Child;
}

/**
 * The page frame: skip link, banner with navigation, one <main>, and a live region that the
 * script fills with short announcements for screen readers.
 * @example c.html(<Layout title="Projects" viewer={viewer}>…</Layout>)
 */
export function Layout(props: LayoutProps) {
  const link = (href: string, key: LayoutProps["nav"], text: string) => (
    <li>
      <a href={href} aria-current={props.nav === key ? "page" : undefined}>
        {text}
      </a>
    </li>
  );
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="color-scheme" content="light dark" />
          <title>{`${props.title} · Hookline`}</title>
          <link rel="stylesheet" href="/ui/assets/app.css" />
          <script src="/ui/assets/app.js" defer />
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <header class="top">
            <a class="brand" href="/ui">
              Hookline
            </a>
            {props.viewer && (
              <nav aria-label="Main">
                <ul>
                  {link("/ui", "overview", "Overview")}
                  {link("/ui/projects", "projects", "Projects")}
                  {link("/ui/sessions", "sessions", "Sessions")}
                  {link("/ui/settings", "settings", "Settings")}
                </ul>
              </nav>
            )}
            {props.viewer?.signedIn && (
              <form method="post" action="/ui/sign-out">
                <Csrf viewer={props.viewer} />
                <button type="submit" class="secondary">
                  Sign out
                </button>
              </form>
            )}
          </header>
          <main
            id="main"
            tabindex={-1}
            data-live-session={props.live}
            data-live-overview={props.liveOverview}
            data-ended={props.ended ? "true" : undefined}
          >
            {props.children}
          </main>
          <div id="announce" class="sr-only" role="status" aria-live="polite" />
        </body>
      </html>
    </>
  );
}

/**
 * A page saying what went wrong, with the status it came with.
 * @example c.html(<ErrorPage viewer={null} title="Not found" detail="no such page" />, 404)
 */
export function ErrorPage(p: { viewer: Viewer | null; title: string; detail: string }) {
  return (
    <Layout title={p.title} viewer={p.viewer}>
      <h1>{p.title}</h1>
      <p role="alert">{p.detail}</p>
      <p>
        <a href="/ui">Back to the start</a>
      </p>
    </Layout>
  );
}

/**
 * Preformatted text (headers, bodies, tracebacks) with a visible caption naming it.
 * @example <Block label="Event body">{text}</Block>
 */
export function Block(p: { label: string; id?: string; children?: Child }) {
  return (
    <figure class="block">
      <figcaption>{p.label}</figcaption>
      <pre id={p.id}>{p.children}</pre>
    </figure>
  );
}
