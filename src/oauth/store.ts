import { connectionVars } from "../connections/status.ts";
import type { ConnectionVars } from "../connections/verdict.ts";
import type { KeyedLock } from "../locks.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/records.ts";
import type { VarWrite } from "./tokens.ts";

/** What the OAuth side reads and changes a project's connection vars with. */
export interface VarStoreDeps {
  stores: Pick<Stores, "projects">;
  secrets: SecretBox;
  /** The same per-project lock the API's var changes take (`project:<name>`). */
  locks: KeyedLock;
  /** Told of each change, so what was cached of the project goes (here and elsewhere). */
  changed: (projectId: string) => void;
}

/** A connection found, with its project as stored now. */
export interface Found {
  doc: ProjectDoc;
  conn: ConnectionRecord;
}

/** The var a connection's OAuth state is kept in (`needs_authorization` after invalid_grant). */
export const STATUS_VAR = "oauth_status";

/**
 * Connections' vars for the OAuth flow: found by connection id or name, read opened, written
 * as `cli var set` writes them (source `cli`, so they outlive redeploys; tokens sealed).
 * @example const vs = connectionVarStore(deps); await vs.write(projectId, "gmail", writes, []);
 */
export function connectionVarStore(d: VarStoreDeps) {
  const open = (s: string) => d.secrets.open(s);
  return {
    async byId(cid: string): Promise<Found | null> {
      for (const doc of await d.stores.projects.list()) {
        const conn = doc.connections?.find((c) => c.id === cid);
        if (conn) return { doc, conn };
      }
      return null;
    },
    async byName(projectId: string, name: string): Promise<Found | null> {
      const doc = await d.stores.projects.get(projectId);
      const conn = doc?.connections?.find((c) => c.name === name);
      return doc && conn ? { doc, conn } : null;
    },
    /**
     * A connection project `projectId` no longer has, as the vars it left behind name it (a
     * removed connection's `cli`-set vars stay): null while the project still has it.
     */
    async left(projectId: string, name: string, integration: string): Promise<Found | null> {
      const doc = await d.stores.projects.get(projectId);
      if (!doc || doc.connections?.some((c) => c.name === name)) return null;
      const at = doc.project.updated_at;
      const id = `removed:${projectId}:${name}`;
      const conn = { id, name, integration, inbound_id: "", created_at: at, updated_at: at };
      return { doc, conn };
    },
    vars: (f: Found): ConnectionVars => connectionVars(f.doc, f.conn.name, open),
    /** Sets `writes` and removes `remove` (short names) in one write of the project. */
    async write(projectId: string, connection: string, writes: VarWrite[], remove: string[]) {
      const doc = await d.stores.projects.get(projectId);
      if (!doc) throw new Error(`project ${projectId} is gone`);
      await d.locks.run(`project:${doc.project.name}`, async () => {
        const fresh = (await d.stores.projects.get(projectId))!;
        const names = new Set([...writes, ...remove.map((name) => ({ name }))].map((w) => w.name));
        const full = (n: string) => `${connection}__${n}`;
        const at = new Date().toISOString();
        fresh.vars = [
          ...fresh.vars.filter((v) => ![...names].some((n) => v.name === full(n))),
          ...writes.map((w) => ({
            env_id: fresh.env.id,
            name: full(w.name),
            value: w.secret ? d.secrets.seal(w.value) : w.value,
            secret: w.secret,
            source: "cli" as const,
            updated_at: at,
          })),
        ];
        await d.stores.projects.put(fresh);
      });
      d.changed(projectId);
    },
  };
}

export type ConnectionVarStore = ReturnType<typeof connectionVarStore>;
