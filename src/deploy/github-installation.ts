import { installationVars } from "../connections/github-install.ts";
import { connectionVars } from "../connections/status.ts";
import { HooklineError } from "../errors.ts";
import type { KeyedLock } from "../locks.ts";
import type { VarRecord } from "../model/records.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/records.ts";

export interface InstallationDeps {
  stores: Pick<Stores, "projects">;
  secrets: SecretBox;
  locks: KeyedLock;
  /** Told of the project's change, as a `cli var set` tells it (compose.ts `projects.changed`). */
  changed: (projectId: string) => void;
  /** The service's env, for its own App (`SVC_GITHUB_*`); default process.env. */
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

/**
 * Connects github connection `connection` of project `projectId` to GitHub App installation
 * `installationId` (what GitHub's redirect after `https://github.com/apps/<app>/installations/new`
 * carries as `installation_id`): GitHub confirms the installation to the App first
 * (github-install.ts), then its vars (`app_id`, `install_id`, `auth_type`, `target_name`, …,
 * AutoKitteh's names) are set in one write, as `cli var set` sets them. The OAuth routes call it
 * (src/oauth/app-install.ts, composed in src/platform/compose.ts) once the browser's state
 * checked out. Returns the vars set; a refusal changes nothing.
 * @example await saveInstallation({ stores, ...projects }, "prj_…", "github_conn", "77")
 */
export async function saveInstallation(
  deps: InstallationDeps,
  projectId: string,
  connection: string,
  installationId: string,
): Promise<Record<string, string>> {
  const doc = await deps.stores.projects.get(projectId);
  if (!doc) throw new HooklineError("not_found", `no project ${projectId}`);
  const conn = doc.connections?.find((c) => c.name === connection);
  if (conn?.integration !== "github") {
    throw new HooklineError(
      "bad_request",
      `${doc.project.name} has no github connection "${connection}"`,
    );
  }
  const vars = connectionVars(doc, connection, (s) => deps.secrets.open(s));
  const saved = await installationVars(vars, installationId, deps);
  await deps.locks.run(`project:${doc.project.name}`, async () => {
    const fresh = (await deps.stores.projects.get(projectId))!;
    const at = new Date().toISOString();
    const names = new Set(Object.keys(saved).map((n) => `${connection}__${n}`));
    const set: VarRecord[] = Object.entries(saved).map(([short, value]) => ({
      env_id: fresh.env.id,
      name: `${connection}__${short}`,
      value,
      secret: false,
      source: "cli",
      updated_at: at,
    }));
    fresh.vars = [...fresh.vars.filter((x) => !names.has(x.name)), ...set];
    await deps.stores.projects.put(fresh);
  });
  deps.changed(projectId);
  return saved;
}
