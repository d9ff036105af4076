import { prefixStorage, type Storage } from "unstorage";
import type {
  BuildRecord,
  DeploymentRecord,
  EventRecord,
  JournalStep,
  ProjectDoc,
  SessionLogEntry,
  WebhookRef,
} from "../model/records.ts";
import { atomicBatch, type StorageOp } from "./drivers/batch.ts";
import type {
  DeploymentStore,
  EventStore,
  JournalStore,
  ListOptions,
  ProjectStore,
  Stores,
} from "./record-types.ts";
import { createSessionStore, isPartKey, partKey, stepOps } from "./session-records.ts";

export type { ListOptions, Stores } from "./record-types.ts";

/** Keys sorted newest first: ids are time-sortable, so this is creation order. */
const newestFirst = (keys: string[]) => keys.sort().reverse();

/**
 * The writes that make a project document current: its name entry and the document. A deploy
 * adds its own to these (src/deploy/commit.ts) and commits them all in one batch.
 * @example await atomicBatch(storage, projectOps(doc));
 */
export function projectOps(doc: ProjectDoc): StorageOp[] {
  return [
    { key: `project-names:${doc.project.name}`, value: doc.project.id },
    { key: `projects:${doc.project.id}`, value: doc },
  ];
}

/** Typed stores over one unstorage `Storage`, each in its own key namespace. */
export function createStores(storage: Storage): Stores {
  const webhooks = prefixStorage(storage, "webhooks");
  const builds = prefixStorage(storage, "builds");
  const logs = prefixStorage(storage, "logs");
  return {
    storage,
    projects: projectStore(storage),
    webhooks: {
      get: (webhookId: string) => webhooks.getItem<WebhookRef>(webhookId),
      put: (webhookId: string, ref: WebhookRef) => webhooks.setItem(webhookId, ref),
      delete: (webhookId: string) => webhooks.removeItem(webhookId),
    },
    builds: {
      get: (id: string) => builds.getItem<BuildRecord>(id),
      put: (rec: BuildRecord) => builds.setItem(rec.id, rec),
    },
    deployments: deploymentStore(storage),
    events: eventStore(storage),
    ...createSessionStore(storage),
    logs: {
      async get(sessionId: string): Promise<SessionLogEntry[]> {
        return (await logs.getItem<SessionLogEntry[]>(sessionId)) ?? [];
      },
      put: (sessionId: string, entries: SessionLogEntry[]) => logs.setItem(sessionId, entries),
    },
    journals: journalStore(storage),
    dispose: () => storage.dispose(),
  };
}

/** Projects by id (`projects:`) and by name (`project-names:`), written together. */
function projectStore(storage: Storage): ProjectStore {
  const projects = prefixStorage(storage, "projects");
  const names = prefixStorage(storage, "project-names");
  return {
    get: (id: string) => projects.getItem<ProjectDoc>(id),
    async byName(name: string) {
      const id = await names.getItem<string>(name);
      return id ? projects.getItem<ProjectDoc>(id) : null;
    },
    async list(): Promise<ProjectDoc[]> {
      const keys = (await projects.getKeys()).sort();
      const docs = await Promise.all(keys.map((k) => projects.getItem<ProjectDoc>(k)));
      return docs.filter((d): d is ProjectDoc => d !== null);
    },
    /** The commit point of a deploy or a var change. */
    async put(doc: ProjectDoc) {
      await atomicBatch(storage, projectOps(doc));
    },
  };
}

function deploymentStore(storage: Storage): DeploymentStore {
  const deployments = prefixStorage(storage, "deployments");
  return {
    get: (id: string) => deployments.getItem<DeploymentRecord>(id),
    put: (rec: DeploymentRecord) => deployments.setItem(rec.id, rec),
    async listByProject(projectId: string): Promise<DeploymentRecord[]> {
      const keys = newestFirst(await deployments.getKeys());
      const recs = await Promise.all(keys.map((k) => deployments.getItem<DeploymentRecord>(k)));
      return recs.filter((r): r is DeploymentRecord => r?.project_id === projectId);
    },
  };
}

function eventStore(storage: Storage): EventStore {
  const events = prefixStorage(storage, "events");
  return {
    get: (id: string) => events.getItem<EventRecord>(id),
    put: (rec: EventRecord) => events.setItem(rec.id, rec),
    keys: () => events.getKeys(),
    delete: (id: string) => events.removeItem(id),
    async list(opts: ListOptions = {}): Promise<EventRecord[]> {
      const keys = newestFirst(await events.getKeys());
      const out: EventRecord[] = [];
      for (const k of keys) {
        if (out.length >= (opts.limit ?? 100)) break;
        const rec = await events.getItem<EventRecord>(k);
        if (rec && (!opts.project_id || rec.project_id === opts.project_id)) out.push(rec);
      }
      return out;
    },
  };
}

function journalStore(storage: Storage): JournalStore {
  const journals = prefixStorage(storage, "journals");
  return {
    /**
     * Steps in order; each is its own key so appending costs one small write. One listing of
     * the session's keys and one batched read: on Redis a hash per session (HKEYS, HMGET),
     * never a match over the whole database (src/storage/drivers/redis.ts).
     */
    async list(sessionId: string): Promise<JournalStep[]> {
      const keys = (await journals.getKeys(sessionId)).filter((k) => !isPartKey(k)).sort();
      if (keys.length === 0) return [];
      const items = await journals.getItems(keys);
      const steps = items.map((i) => i.value as JournalStep | null);
      return steps.filter((s): s is JournalStep => s !== null);
    },
    async append(sessionId: string, step: JournalStep) {
      await atomicBatch(storage, stepOps(sessionId, step));
    },
    /**
     * The parts of step `seq`'s value kept apart, in order (as stored: sealed), one read at a
     * time (a reply sends them as they are read); missing ones are left out.
     */
    async parts(sessionId: string, seq: number, count: number): Promise<string[]> {
      const out: string[] = [];
      for (let i = 0; i < count; i++) {
        const part = await storage.getItemRaw<string | Uint8Array>(partKey(sessionId, seq, i));
        if (part !== null) out.push(typeof part === "string" ? part : Buffer.from(part).toString());
      }
      return out;
    },
    async clear(sessionId: string) {
      const keys = await journals.getKeys(sessionId);
      await Promise.all(keys.map((k) => journals.removeItem(k)));
    },
  };
}
