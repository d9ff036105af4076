/**
 * "Re-run all failed": the failed sessions of one trigger over a range, each re-run from its
 * stored event on the active deployment. A GET names how many first; only the POST of that
 * page (CSRF-checked) starts them, at most MAX_RERUN at once.
 */
import type { Context, Hono } from "hono";
import { HooklineError } from "../errors.ts";
import { isRange, RANGE_MS, type Range } from "../stats/overview.ts";
import type { UiAuth } from "./auth.ts";
import type { SessionRecord, UiData } from "./data.ts";
import { checkedPost, projectOf, type UiEnv } from "./page-kit.ts";
import { Csrf, Layout, type Viewer } from "./views/layout.tsx";
import { plural } from "./views/overview.tsx";
import { qs } from "./views/sessions.tsx";

/** Sessions one click re-runs, at most. */
export const MAX_RERUN = 500;

interface Target {
  project: string;
  projectName: string;
  trigger: string;
  range: Range;
}

async function targetOf(data: UiData, c: Context): Promise<Target> {
  const ref = c.req.query("project");
  const trigger = c.req.query("trigger");
  const range = c.req.query("range") || "day";
  if (!ref || !trigger) throw new HooklineError("bad_request", "choose a project and a trigger");
  if (!isRange(range)) throw new HooklineError("bad_request", "range must be hour, day or week");
  const view = await projectOf(data, ref);
  if (!view.triggers.some((t) => t.name === trigger))
    throw new HooklineError("not_found", `trigger "${trigger}" not found`);
  return { project: view.project.id, projectName: view.project.name, trigger, range };
}

/** The failed sessions of the target, newest first, at most MAX_RERUN + 1 (to say "more"). */
async function failed(data: UiData, t: Target): Promise<SessionRecord[]> {
  const out: SessionRecord[] = [];
  let cursor: string | undefined;
  const since = Date.now() - RANGE_MS[t.range];
  for (;;) {
    const page = await data.listSessions({
      project: t.project,
      trigger: t.trigger,
      state: "error",
      since,
      cursor,
      limit: 200,
    });
    out.push(...page.sessions);
    if (!page.next || out.length > MAX_RERUN) return out.slice(0, MAX_RERUN + 1);
    cursor = page.next;
  }
}

function Confirm(p: { viewer: Viewer; t: Target; count: number; more: boolean }) {
  const { t } = p;
  const back = `/ui/sessions${qs({ project: t.project, trigger: t.trigger, range: t.range, state: "error" })}`;
  const what = `${plural(p.count, "failed session")} of ${t.projectName}/${t.trigger} in the last ${t.range}`;
  return (
    <Layout title="Re-run failed sessions" nav="sessions" viewer={p.viewer}>
      <h1>Re-run failed sessions</h1>
      {p.count === 0 ? (
        <p id="rerun-count">
          No failed session of {`${t.projectName}/${t.trigger}`} in the last {t.range}.
        </p>
      ) : (
        <>
          <p id="rerun-count">
            Re-run {what}
            {p.more ? ` (the newest ${MAX_RERUN}; run again for the rest)` : ""}? Each starts a new
            session from its stored event on the active deployment.
          </p>
          <form
            method="post"
            action={`/ui/sessions/rerun-failed${qs({ project: t.project, trigger: t.trigger, range: t.range })}`}
          >
            <Csrf viewer={p.viewer} />
            <button type="submit" id="rerun-confirm">
              Re-run {plural(p.count, "session")}
            </button>
          </form>
        </>
      )}
      <p>
        <a href={back}>Back to the failed sessions</a>
      </p>
    </Layout>
  );
}

function Done(p: { viewer: Viewer; t: Target; started: SessionRecord[]; failedToStart: string[] }) {
  const { t } = p;
  return (
    <Layout title="Re-runs started" nav="sessions" viewer={p.viewer}>
      <h1>Re-runs started</h1>
      <p id="rerun-done">
        Started {plural(p.started.length, "re-run")} of {`${t.projectName}/${t.trigger}`}.
        {p.failedToStart.length > 0 &&
          ` ${plural(p.failedToStart.length, "session")} could not be re-run: ${p.failedToStart.join("; ")}`}
      </p>
      <ul>
        {p.started.map((r) => (
          <li>
            <a class="mono" href={`/ui/sessions/${encodeURIComponent(r.id)}`}>
              {r.id}
            </a>{" "}
            <span class="muted">event {r.event_id}</span>
          </li>
        ))}
      </ul>
      <p>
        <a href={`/ui/sessions${qs({ project: t.project, trigger: t.trigger })}`}>Its sessions</a>
      </p>
    </Layout>
  );
}

/** @example bulkRerunPages(app, data, auth) // before /sessions/:id */
export function bulkRerunPages(app: Hono<UiEnv>, data: UiData, auth: UiAuth): void {
  const post = checkedPost(auth);
  app.get("/sessions/rerun-failed", async (c) => {
    const t = await targetOf(data, c);
    const list = await failed(data, t);
    const count = Math.min(list.length, MAX_RERUN);
    return c.html(
      <Confirm viewer={c.get("viewer")} t={t} count={count} more={list.length > MAX_RERUN} />,
    );
  });
  app.post("/sessions/rerun-failed", async (c) => {
    await post(c);
    const t = await targetOf(data, c);
    const list = (await failed(data, t)).slice(0, MAX_RERUN);
    const started: SessionRecord[] = [];
    const failedToStart: string[] = [];
    // One after another: a burst of re-runs queues as webhooks would.
    for (const rec of list.reverse()) {
      try {
        started.push(await data.rerun(rec.id));
      } catch (e) {
        failedToStart.push(`${rec.id}: ${(e as Error).message}`);
      }
    }
    return c.html(
      <Done viewer={c.get("viewer")} t={t} started={started} failedToStart={failedToStart} />,
    );
  });
}
