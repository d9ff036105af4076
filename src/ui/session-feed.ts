import { prefixStorage, type Storage } from "unstorage";
import { keyedLock } from "../locks.ts";
import { atomicBatch, type StorageOp } from "../storage/drivers/batch.ts";

/** Session ids one page document holds. */
export const FEED_PAGE = 200;
/** Pages a scope keeps; the oldest page goes when a new one would pass this (a bound). */
export const FEED_MAX_PAGES = 1000;

/** Which sessions a feed lists: all, one project's, or one trigger's of a project. */
export type FeedScope =
  | { kind: "all" }
  | { kind: "project"; projectId: string }
  | { kind: "trigger"; projectId: string; trigger: string };

export interface FeedEntry {
  /** Position in the scope, counting from 0 at the oldest; a cursor is one of these. */
  seq: number;
  id: string;
}

interface Tail {
  count: number;
  page: string[];
}

function scopeKey(scope: FeedScope): string {
  if (scope.kind === "all") return "all";
  if (scope.kind === "project") return `project:${scope.projectId}`;
  return `trigger:${scope.projectId}:${scope.trigger}`;
}

const pageKey = (scope: string, n: number) => `${scope}:page:${String(n).padStart(8, "0")}`;

/**
 * The narrow index the sessions page reads: per scope, session ids in the order they started,
 * in page documents of FEED_PAGE ids plus a head holding the count. A page of the list reads
 * one or two page documents and the records it shows, never every key of the store.
 *
 * Why not the stores' `session-index`: listing it is `getKeys`, which reads every key (on
 * Redis a SCAN over the keyspace, on the fs driver a walk of its folders) before it can sort
 * them.
 *
 * Appends are serialised in this process. Instances sharing Redis (`shared`) read the tail
 * afresh for each append, but two appending at the same moment can still lose an id from the
 * index (never the session itself).
 * @example const feed = createSessionFeed(storage); await feed.append(rec); await feed.entries({ kind: "all" }, null, 50)
 */
export function createSessionFeed(storage: Storage, opts: { shared?: boolean } = {}) {
  const PREFIX = "ui-session-feed";
  const store = prefixStorage(storage, PREFIX);
  const full = (key: string) => `${PREFIX}:${key}`;
  const locks = keyedLock();
  // The promise is cached, not the value: two first calls must share one tail.
  const tails = new Map<string, Promise<Tail>>();

  function tail(scope: string): Promise<Tail> {
    let t = tails.get(scope);
    // Shared storage: another instance may have appended, so read the tail afresh each time.
    if (!t || opts.shared) {
      t = (async () => {
        const count = (await store.getItem<{ count: number }>(`${scope}:head`))?.count ?? 0;
        const n = Math.floor(count / FEED_PAGE);
        const page =
          count % FEED_PAGE === 0 ? [] : ((await store.getItem<string[]>(pageKey(scope, n))) ?? []);
        return { count, page };
      })();
      tails.set(scope, t);
    }
    return t;
  }

  /** The writes that add `id` to `scope`'s tail (the tail in memory moves on at once). */
  async function appendOps(scope: string, id: string): Promise<StorageOp[]> {
    const t = await tail(scope);
    const n = Math.floor(t.count / FEED_PAGE);
    const ops: StorageOp[] = [];
    if (t.count % FEED_PAGE === 0) {
      t.page = [];
      if (n >= FEED_MAX_PAGES)
        ops.push({ key: full(pageKey(scope, n - FEED_MAX_PAGES)), value: null });
    }
    t.page.push(id);
    t.count++;
    ops.push({ key: full(pageKey(scope, n)), value: [...t.page] });
    ops.push({ key: full(`${scope}:head`), value: { count: t.count } });
    return ops;
  }

  return {
    /** Records a session that started, in the three scopes it belongs to. */
    async append(rec: { id: string; project_id: string; trigger_name: string }): Promise<void> {
      const scopes = [
        "all",
        scopeKey({ kind: "project", projectId: rec.project_id }),
        scopeKey({ kind: "trigger", projectId: rec.project_id, trigger: rec.trigger_name }),
      ];
      // One commit for the three scopes (pages and heads together, so a reader never sees a
      // count ahead of its page), in order with the other appends of this process.
      await locks.run("append", async () => {
        const ops: StorageOp[] = [];
        for (const scope of scopes) ops.push(...(await appendOps(scope, rec.id)));
        await atomicBatch(storage, ops);
      });
    },

    /** Whether the feed was ever written (else the adapter backfills it once). */
    async isEmpty(): Promise<boolean> {
      return (await tail("all")).count === 0;
    },

    /**
     * Up to `max` entries before `before` (a seq; null: from the newest), newest first. Reads
     * at most `ceil(max / FEED_PAGE) + 1` page documents.
     */
    async entries(scope: FeedScope, before: number | null, max: number): Promise<FeedEntry[]> {
      const key = scopeKey(scope);
      const { count } = await tail(key);
      const start = Math.min(before ?? count, count);
      const out: FeedEntry[] = [];
      const pages = new Map<number, string[] | null>();
      for (let seq = start - 1; seq >= 0 && out.length < max; seq--) {
        const n = Math.floor(seq / FEED_PAGE);
        if (!pages.has(n)) pages.set(n, await store.getItem<string[]>(pageKey(key, n)));
        const page = pages.get(n);
        if (!page) break; // trimmed past FEED_MAX_PAGES: nothing older is listed
        const id = page[seq % FEED_PAGE];
        if (id) out.push({ seq, id });
      }
      return out;
    },
  };
}

export type SessionFeed = ReturnType<typeof createSessionFeed>;
