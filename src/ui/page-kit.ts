/**
 * What the UI's page groups share: the Hono env every signed-in request carries (viewer and
 * cookie nonce), the CSRF check of a form post, and a project found by id or name.
 */
import type { Context } from "hono";
import { HooklineError } from "../errors.ts";
import { requestOrigin } from "../routes/forwarded.ts";
import type { UiAuth } from "./auth.ts";
import type { ProjectView, UiData } from "./data.ts";
import { csrfForm } from "./forms.ts";
import type { Viewer } from "./views/layout.tsx";

export type UiEnv = { Variables: { viewer: Viewer; nonce: string } };

/** Lines of the session list one page shows. */
export const PAGE_SIZE = 50;

/**
 * Reads a form post and checks its CSRF token against the cookie's nonce: throws if it fails.
 * @example await checkedPost(auth)(c)
 */
export const checkedPost = (auth: UiAuth) => async (c: Context<UiEnv>) => {
  const form = await csrfForm(c);
  auth.checkPost(c, c.get("nonce"), form._csrf);
};

/** A project by id or name, or a not_found error a page shows. */
export async function projectOf(data: UiData, ref: string): Promise<ProjectView> {
  const view = await data.project(ref);
  if (!view) throw new HooklineError("not_found", `project "${ref}" not found`);
  return view;
}

/**
 * The origin the UI was reached at, as the router in front forwarded it: webhook URLs on the
 * pages are shown under it.
 */
export const origin = (c: Context) => requestOrigin(c);
