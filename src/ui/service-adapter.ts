/**
 * `UiData` over what `createApp` has today: the stores, the session manager (`start`, `live`,
 * `onEnd`, `whenEnded`, `stop`) and the app's own `fetch`. The one file to re-wire when the
 * session core changes shape.
 */
import { randomUUID } from "node:crypto";
import type { Storage } from "unstorage";
import { statusOf, statusText } from "../connections/index.ts";
import { HooklineError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import { rerunSession } from "../routes/api/rerun.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Stores } from "../storage/records.ts";
import {
  ENDED_STATES,
  type SessionChange,
  type SessionPage,
  type SessionQuery,
  type UiData,
} from "./data.ts";
import { journalView, projectSummary as summary } from "./record-views.ts";

/** The header a test request carries, so the session it starts can be found. */
export const TEST_HEADER = "X-Hookline-Test";
/** Index entries one page of the list may look at (a trigger filter skips other triggers'). */
const SCAN_BUDGET = 1000;
/**
 * Sessions that ended here are kept in memory briefly: their stored record and log trail the
 * end by a write or two. Few and short, as each holds a whole log.
 */
const RECENT_MAX = 100;
const RECENT_MS = 5_000;
/** Characters of a test request's response body the page shows. */
const MAX_SHOWN = 256 * 1024;

export interface UiDataDeps {
  storage: Storage;
  stores: Stores;
  sessions: SessionManager;
  /** The service's own fetch (`app.fetch`): test requests go through the webhook route. */
  fetch: (req: Request) => Promise<Response>;
  /** Other instances write the same storage (Redis). */
  shared?: boolean;
  log?: Logger;
  /** Opens a sealed secret, so a connection's status can tell an empty secret from a set one. */
  openSecret?: (sealed: string) => string;
}

type Held = { record: SessionRecord; entries: SessionLogEntry[] };

/**
 * @example const data = createUiData({ storage, stores, sessions, fetch: (r) => app.fetch(r) });
 */
export function createUiData(deps: UiDataDeps): UiData {
  const { stores, sessions } = deps;
  const watchers = new Set<(record: SessionRecord) => void>();
  const recent = new Map<string, Held & { at: number }>();
  const pendingTests = new Map<string, (sessionId: string) => void>();
  const notify = (record: SessionRecord) => {
    for (const w of watchers) w({ ...record });
  };

  // Every session that starts here, whoever asked (a webhook, the shared queue, a re-run).
  sessions.onStarted((record) => {
    if (pendingTests.size) {
      // A test request sent from a trigger's page: its nonce header names the session it started.
      void stores.events.get(record.event_id).then((event) => {
        const data = event?.data;
        const headers = (data && "headers" in data ? data.headers : {}) as Record<string, string>;
        const nonce = Object.entries(headers).find(
          ([k]) => k.toLowerCase() === TEST_HEADER.toLowerCase(),
        )?.[1];
        if (nonce) pendingTests.get(nonce)?.(record.id);
      });
    }
    const live = sessions.live(record.id);
    if (live) {
      const unlisten = live.log.listen((e) => {
        if (e.kind === "state") notify(live.record);
      });
      sessions.onEnd(record.id, (final) => {
        unlisten();
        remember({ record: final, entries: live.log.entries });
        notify(final);
      });
    }
    notify(live?.record ?? record);
  });

  function remember(held: Held) {
    const at = Date.now();
    for (const [id, r] of recent) {
      if (recent.size < RECENT_MAX && at - r.at < RECENT_MS) break;
      recent.delete(id);
    }
    recent.set(held.record.id, { ...held, at });
  }

  /** A session's record and log: running here, just ended here, or from storage. */
  async function held(id: string): Promise<Held | null> {
    const live = sessions.live(id);
    if (live) return { record: live.record, entries: live.log.entries };
    const r = recent.get(id);
    if (r && Date.now() - r.at < RECENT_MS) return r;
    const record = await stores.sessions.get(id);
    return record ? { record, entries: await stores.logs.get(id) } : null;
  }

  async function record(id: string): Promise<SessionRecord | null> {
    const r = recent.get(id);
    const fresh = r && Date.now() - r.at < RECENT_MS ? r.record : null;
    return sessions.live(id)?.record ?? fresh ?? stores.sessions.get(id);
  }

  /**
   * One page of the list from the stores' session index (the one index of sessions: a project's
   * entries are one key range, one hash on Redis), newest first; the cursor is the id of the
   * last session looked at. A trigger filter reads records until the page is full, at most
   * SCAN_BUDGET of them.
   */
  async function listSessions(q: SessionQuery): Promise<SessionPage> {
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
    let before = q.cursor;
    const out: SessionRecord[] = [];
    let scanned = 0;
    while (out.length < limit && scanned < SCAN_BUDGET) {
      const chunk = Math.min(q.trigger ? 100 : limit - out.length, SCAN_BUDGET - scanned);
      const entries = await stores.sessionIndex.page({
        projectId: q.project,
        state: q.state,
        before,
        limit: chunk,
      });
      if (entries.length === 0) return { sessions: out, next: null, scanned };
      const recs = await Promise.all(entries.map((e) => record(e.id)));
      for (const [i, e] of entries.entries()) {
        scanned++;
        before = e.id;
        const rec = recs[i];
        const shown = rec && (!q.state || rec.state === q.state);
        if (shown && (!q.trigger || rec.trigger_name === q.trigger)) out.push({ ...rec });
        if (out.length >= limit) break;
      }
      if (entries.length < chunk && before === entries.at(-1)?.id) {
        return { sessions: out, next: null, scanned };
      }
    }
    return { sessions: out, next: before ?? null, scanned };
  }

  function watchSession(id: string, from: number, onChange: (c: SessionChange) => void) {
    let closed = false;
    let unlisten = () => {};
    void (async () => {
      const live = sessions.live(id);
      if (live) {
        for (const entry of live.log.entries.slice(from)) {
          onChange({ kind: "entry", entry, record: live.record });
        }
        const off = live.log.listen((entry) => {
          if (!closed) onChange({ kind: "entry", entry, record: live.record });
        });
        const offEnd = sessions.onEnd(id, (final) => {
          off();
          if (!closed) onChange({ kind: "end", record: final });
        });
        unlisten = () => {
          off();
          offEnd();
        };
        return;
      }
      // Ended, or run by another instance: wait for its end there, then read what it logged.
      let h = await held(id);
      if (h && !ENDED_STATES.has(h.record.state) && !recent.has(id)) {
        await sessions.whenEnded(id);
        h = await held(id);
      }
      if (!h || closed) return;
      for (const entry of h.entries.slice(from))
        onChange({ kind: "entry", entry, record: h.record });
      onChange({ kind: "end", record: h.record });
    })();
    return () => {
      closed = true;
      unlisten();
    };
  }

  return {
    async dispose() {},
    async listProjects() {
      return (await stores.projects.list()).map(summary);
    },
    async project(ref) {
      const doc = ref.startsWith("prj_")
        ? await stores.projects.get(ref)
        : await stores.projects.byName(ref);
      if (!doc) return null;
      return {
        project: summary(doc),
        triggers: doc.triggers.map((t) => ({ ...t })),
        // A secret's value (ciphertext) never leaves this function.
        vars: doc.vars.map((v) => ({
          name: v.name,
          secret: v.secret,
          value: v.secret ? null : v.value,
          source: v.source,
        })),
        connections: (doc.connections ?? []).map((c) => {
          const status = statusOf(doc, c, deps.openSecret ?? ((x) => x));
          return {
            name: c.name,
            integration: c.integration,
            status: statusText(status),
            ready: status.state === "ready",
            inbound_path: c.inbound_id ? `/inbound/${c.inbound_id}` : "",
          };
        }),
      };
    },
    listSessions,
    async session(id) {
      const h = await held(id);
      if (!h) return null;
      const event = await stores.events.get(h.record.event_id);
      const steps = h.record.durable ? await stores.journals.list(id) : [];
      return {
        record: { ...h.record },
        event,
        log: [...h.entries],
        journal: steps.map((s) => journalView(s, h.record)),
      };
    },
    watchSessions(onChange) {
      watchers.add(onChange);
      return () => watchers.delete(onChange);
    },
    watchSession,
    async stop(id) {
      if (!(await record(id))) throw new HooklineError("not_found", `session "${id}" not found`);
      return sessions.stop(id);
    },
    rerun: (id) => rerunSession(stores, sessions, id),
    async testRequest(projectId, triggerName, req) {
      const doc = await stores.projects.get(projectId);
      const trigger = doc?.triggers.find((t) => t.name === triggerName);
      if (!trigger) throw new HooklineError("not_found", `trigger "${triggerName}" not found`);
      const nonce = randomUUID();
      let sessionId: string | null = null;
      pendingTests.set(nonce, (id) => {
        sessionId = id;
      });
      try {
        const headers = new Headers(req.headers);
        headers.set(TEST_HEADER, nonce);
        const hasBody = !["GET", "HEAD"].includes(req.method);
        const url = `${req.origin}/webhooks/${trigger.webhook_id}${req.suffix}`;
        const res = await deps.fetch(
          new Request(url, { method: req.method, headers, body: hasBody ? req.body : undefined }),
        );
        const text = await res.text();
        // The page shows the response: a huge one is cut, the session keeps the real thing.
        const body =
          text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}… [cut at 256 KiB]` : text;
        if (!sessionId && res.status === 202) {
          try {
            sessionId = (JSON.parse(text) as { session_id?: string | null }).session_id ?? null;
          } catch {
            // A handler's own 202 that is not the webhook route's JSON: no session named.
          }
        }
        return {
          status: res.status,
          headers: [...res.headers.entries()],
          body,
          session_id: sessionId,
        };
      } finally {
        pendingTests.delete(nonce);
      }
    },
  };
}
