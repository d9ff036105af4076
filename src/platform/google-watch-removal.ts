import type { Clock } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { googleApiUrl } from "../connections/google-api.ts";
import { type GoogleWatchKind, WATCH_VARS, WATCHED_CALENDAR } from "../connections/google-push.ts";
import { stopGoogleWatch } from "../connections/google-watch.ts";
import { connectionVars } from "../connections/index.ts";
import type { Logger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import type { ConnectionVarStore, VarStoreDeps } from "../oauth/store.ts";

/** How long one instance's claim on a channel's stop holds the others off. */
const CLAIM_MS = 5 * 60_000;

/** What the keeper's steps share: projects, claims, the log, the clock, Google's fetch. */
export interface WatchParts {
  projects: VarStoreDeps;
  store: ConnectionVarStore;
  cluster: Pick<Cluster, "once" | "forget">;
  log: Logger;
  clock: Clock;
  fetch: typeof fetch;
  google?: {
    /** A fresh access token (the OAuth refresher). */
    accessToken?: (projectId: string, connection: string) => Promise<string | undefined>;
    removedToken?: (p: string, c: string, integration: string) => Promise<string | undefined>;
  };
}

/**
 * The channels a project's vars still hold (`<name>__CalendarEventsWatchID`,
 * `<name>__DriveEventsWatchID`) whose name is no longer a connection of that integration with
 * an inbound path: the connection was removed (or changed integration) while its vars stayed.
 * @example removedWatches(doc) // [{ name: "cal", kind: "googlecalendar" }]
 */
export function removedWatches(doc: ProjectDoc): { name: string; kind: GoogleWatchKind }[] {
  const found: { name: string; kind: GoogleWatchKind }[] = [];
  for (const kind of ["googlecalendar", "googledrive"] as const) {
    const suffix = `__${WATCH_VARS[kind].id}`;
    for (const v of doc.vars) {
      if (!v.name.endsWith(suffix) || v.value === "") continue;
      const name = v.name.slice(0, -suffix.length);
      const live = doc.connections?.some(
        (c) => c.name === name && c.integration === kind && c.inbound_id !== "",
      );
      if (!live) found.push({ name, kind });
    }
  }
  return found;
}

/**
 * Stops at Google the channel of each Calendar or Drive connection the project no longer has
 * (`channels.stop`, with a token refreshed for it), then clears its channel vars (the id,
 * resource id, expiry, cursor and channel token): a stop Google refuses is one warning line
 * (the channel expires on its own) and the vars are cleared all the same. Claimed across the
 * fleet, so one instance calls Google. Never throws.
 * @example await stopRemovedWatches(parts, doc);
 */
export async function stopRemovedWatches(d: WatchParts, doc: ProjectDoc): Promise<void> {
  for (const { name, kind } of removedWatches(doc)) {
    const names = WATCH_VARS[kind];
    const vars = connectionVars(doc, name, (s) => d.projects.secrets.open(s));
    const id = vars(names.id)!;
    const where = `${kind} connection ${doc.project.name}/${name} (removed)`;
    try {
      if (!(await d.cluster.once(`google-watch-stop:${doc.project.id}:${name}:${id}`, CLAIM_MS))) {
        continue;
      }
      const removed = d.google?.removedToken;
      const fresh = await removed?.(doc.project.id, name, kind).catch(() => undefined);
      const token = fresh ?? vars("oauth_AccessToken") ?? "";
      const caller = { api: googleApiUrl(vars("base_url")), token, fetch: d.fetch };
      const problem = await stopGoogleWatch({ kind, vars, caller, now: d.clock.now() });
      if (problem) d.log.warn(`${where}: watch channel ${id} not stopped (${problem})`);
      else d.log.info(`${where}: watch channel ${id} stopped`);
      await d.store.write(doc.project.id, name, [], [...Object.values(names), WATCHED_CALENDAR]);
    } catch (e) {
      d.log.warn(`${where}: watch channel ${id} not stopped: ${String(e)}`);
    }
  }
}
