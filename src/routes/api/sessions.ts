import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { HooklineError } from "../../errors.ts";
import type {
  JournalStep,
  SessionLogEntry,
  SessionRecord,
  SessionState,
} from "../../model/records.ts";
import type { SessionManager } from "../../sessions/manager.ts";
import type { Stores } from "../../storage/stores.ts";
import { rerunSession } from "../../ui/rerun.ts";
import { findProject } from "./views.ts";

/** A journal step without its pickled payloads, and whether the latest run replayed it. */
function journalView(step: JournalStep, record: SessionRecord) {
  return {
    seq: step.seq,
    kind: step.kind,
    ...(step.kind === "activity" ? { function: step.function } : {}),
    ...(step.kind === "subscribe" ? { source: step.name, subscription_id: step.value } : {}),
    ...(step.kind === "next_event" && step.value && typeof step.value === "object"
      ? { event_id: (step.value as { event_id?: string }).event_id }
      : {}),
    ok: step.kind === "outcome" || !("error" in step && step.error),
    replayed: step.seq < (record.replayed_steps ?? 0),
  };
}

export type JournalView = ReturnType<typeof journalView>;

const STATES = new Set<SessionState>(["created", "running", "completed", "error", "stopped"]);
const ENDED = new Set<SessionState>(["completed", "error", "stopped"]);

/** Sessions: list, one, its log and prints, stop, and a live watch over server-sent events. */
export function sessionRoutes(stores: Stores, sessions: SessionManager) {
  const app = new Hono();

  async function current(
    id: string,
  ): Promise<{ record: SessionRecord; entries: SessionLogEntry[] }> {
    const live = sessions.live(id);
    if (live) return { record: live.record, entries: live.log.entries };
    const record = await stores.sessions.get(id);
    if (!record) throw new HooklineError("not_found", `session "${id}" not found`);
    return { record, entries: await stores.logs.get(id) };
  }

  app.get("/sessions", async (c) => {
    const state = c.req.query("state");
    if (state && !STATES.has(state as SessionState)) {
      throw new HooklineError("bad_request", `state must be one of ${[...STATES].join(", ")}`);
    }
    const limit = Number(c.req.query("limit") ?? "100");
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new HooklineError("bad_request", "limit must be a whole number from 1 to 10000");
    }
    const ref = c.req.query("project");
    const project_id = ref ? (await findProject(stores, ref)).project.id : undefined;
    const list = await stores.sessions.list({ project_id, state: state as SessionState, limit });
    // A running session's record in storage may trail the live one by a write.
    return c.json({ sessions: list.map((r) => sessions.live(r.id)?.record ?? r) });
  });
  app.get("/sessions/:id", async (c) =>
    c.json({ session: (await current(c.req.param("id"))).record }),
  );
  app.get("/sessions/:id/log", async (c) => {
    const { record, entries } = await current(c.req.param("id"));
    const journal = record.durable ? await stores.journals.list(record.id) : [];
    return c.json({
      session: record,
      entries,
      journal: journal.map((s) => journalView(s, record)),
    });
  });
  app.get("/sessions/:id/prints", async (c) => {
    const { record, entries } = await current(c.req.param("id"));
    const prints = entries.flatMap((e) =>
      e.kind === "print" ? [{ t: e.t, text: e.text, stream: e.stream }] : [],
    );
    return c.json({ session_id: record.id, state: record.state, prints });
  });
  app.post("/sessions/:id/stop", async (c) => {
    await current(c.req.param("id"));
    return c.json({ session: await sessions.stop(c.req.param("id")) });
  });
  // A new session from the same stored event (see rerunSession).
  app.post("/sessions/:id/rerun", async (c) =>
    c.json({ session: await rerunSession(stores, sessions, c.req.param("id")) }, 201),
  );
  app.get("/sessions/:id/watch", async (c) => {
    const id = c.req.param("id");
    const { record, entries } = await current(id);
    return streamSSE(c, async (stream) => {
      const live = sessions.live(id);
      const queue: SessionLogEntry[] = [...entries];
      let sent = 0;
      let end: SessionRecord | null = ENDED.has(record.state) ? record : null;
      let wake: (() => void) | null = null;
      const unlisten = live?.log.listen((e) => {
        queue.push(e);
        wake?.();
      });
      let closed = false;
      if (!end) {
        // Here or on another instance: either way the manager says when it ends.
        void sessions.whenEnded(id).then((r) => {
          end = r ?? record;
          wake?.();
        });
      }
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      try {
        for (;;) {
          while (queue.length) {
            await stream.writeSSE({ data: JSON.stringify(queue.shift()) });
            sent++;
          }
          if (end || closed) break;
          await new Promise<void>((r) => {
            wake = r;
          });
          wake = null;
        }
        if (closed) return;
        if (!live) {
          // It ran elsewhere: what it logged since we started is in storage now.
          for (const e of (await stores.logs.get(id)).slice(sent)) {
            await stream.writeSSE({ data: JSON.stringify(e) });
          }
        }
        await stream.writeSSE({ event: "end", data: JSON.stringify(end ?? record) });
      } finally {
        unlisten?.();
      }
    });
  });
  return app;
}
