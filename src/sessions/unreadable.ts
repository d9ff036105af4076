import type { SessionRecord, SessionState } from "../model/records.ts";
import type { IndexEntry } from "../storage/record-types.ts";
import type { Stores } from "../storage/records.ts";

/**
 * Whether what storage handed back is a session record: damaged JSON comes back as its text
 * (unstorage parses leniently), a record from elsewhere without its fields.
 * @example isSessionRecord(await stores.sessions.get(id))
 */
export function isSessionRecord(value: unknown): value is SessionRecord {
  const r = value as SessionRecord | null;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.id === "string" &&
    typeof r.project_id === "string" &&
    typeof r.state === "string"
  );
}

/** The index entry of a session left `running` or `created`: what is known of it without its record. */
export async function findEntry(stores: Stores, id: string): Promise<IndexEntry | null> {
  for (const doc of await stores.projects.list()) {
    for (const state of ["running", "created"] as const) {
      const found = (await stores.sessionIndex.entries(doc.project.id, state)).find(
        (e) => e.id === id,
      );
      if (found) return found;
    }
  }
  return null;
}

/**
 * Ends a session whose record cannot be read: a record in `error` saying so replaces it, with
 * what its index entry knows (project, id), so it is listed as ended and never stays `running`
 * with no process.
 * @example await endUnreadable(stores, entry, "it is not a session record", new Date().toISOString());
 */
export async function endUnreadable(
  stores: Stores,
  entry: IndexEntry,
  why: string,
  t: string,
): Promise<SessionRecord> {
  const doc = await stores.projects.get(entry.project_id);
  const record: SessionRecord = {
    id: entry.id,
    project_id: entry.project_id,
    project_name: doc?.project.name ?? "",
    deployment_id: "",
    build_id: "",
    trigger_id: "",
    trigger_name: "",
    event_id: "",
    entry: "",
    durable: false,
    is_sync: false,
    state: "error",
    error: { message: `the session's record cannot be read: ${why}` },
    attempts: 0,
    created_at: t,
    started_at: null,
    ended_at: t,
    updated_at: t,
  };
  await stores.sessions.put(record, entry.state as SessionState);
  return record;
}
