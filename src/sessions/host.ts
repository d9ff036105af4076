import { HooklineError } from "../errors.ts";
import { compileFilter, FilterError } from "../events/filter.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { ProjectDoc, SessionLogEntry } from "../model/records.ts";
import type { SessionHost } from "../runtime/runtime.ts";
import type { Stores } from "../storage/stores.ts";
import { type Active, now, sleepUntil } from "./active.ts";

/** What the host of one session needs from the session manager. */
export interface HostContext {
  stores: Stores;
  subscriptions: Subscriptions;
  /** Writes the session's record (a timer's deadline must outlive the process). */
  persist(active: Active): void;
  /** Releases the session's process if `waiting` lasts longer than eviction allows. */
  parkIfLong(active: Active, waiting: Promise<unknown>, waitMs: number): void;
}

/**
 * What a running session asks of the service, answered for one session: its log (prints,
 * activities, outcomes), the final outcome a held request waits for, subscriptions, waits,
 * durable timers and journal steps.
 */
export function createHost(
  ctx: HostContext,
  active: Active,
  doc: ProjectDoc,
  started: () => void,
): SessionHost {
  const { record, log } = active;
  const { stores, subscriptions } = ctx;
  return {
    started,
    print: (text, stream) =>
      log.append({ t: now(), kind: "print", text: active.redact(text), stream }),
    activity: (r) =>
      log.append({
        t: now(),
        kind: "activity",
        function: r.function,
        duration_ms: r.duration_ms,
        ok: r.ok,
        ...(r.error ? { error: active.redact(r.error) } : {}),
      }),
    outcome: (outcome) => {
      const entry: SessionLogEntry = {
        t: now(),
        kind: "outcome",
        status_code: outcome.status_code,
        headers: outcome.headers,
        body: outcome.body ? outcome.body.toString("base64") : null,
        more: outcome.more,
        sent: false,
      };
      if (!record.is_sync) {
        log.append({ ...entry });
        log.append({
          t: entry.t,
          kind: "warning",
          text: "http_outcome in a session of an asynchronous trigger changes nothing",
        });
        return;
      }
      if (outcome.more) return log.append(entry);
      if (active.final) {
        log.append(entry);
        log.append({
          t: entry.t,
          kind: "warning",
          text: "the response was already sent: this outcome changes nothing",
        });
        return;
      }
      active.final = outcome;
      log.append({ ...entry, sent: true });
      for (const w of [...active.waiters]) w({ kind: "outcome", outcome });
    },
    subscribe: async (name, filter) => {
      if (!doc.triggers.some((t) => t.name === name)) {
        throw new HooklineError("bad_request", `unknown source "${name}"`);
      }
      let compiled = null;
      try {
        compiled = filter ? compileFilter(filter) : null;
      } catch (err) {
        if (err instanceof FilterError) throw new HooklineError("bad_request", err.message);
        throw err;
      }
      const id = subscriptions.add(record.id, `${record.project_id}:${name}`, compiled);
      log.append({ t: now(), kind: "subscribe", subscription_id: id, source: name, filter });
      return id;
    },
    sleep: async (seq, ms) => {
      if (record.timer?.seq !== seq) {
        record.timer = { seq, until: Date.now() + ms };
        ctx.persist(active); // the deadline outlives this process, and this service
      }
      const waiting = sleepUntil(record.timer.until);
      ctx.parkIfLong(active, waiting, record.timer.until - Date.now());
      await waiting;
    },
    nextEvent: async (ids, timeoutMs) => {
      const waiting = subscriptions.next(record.id, ids, timeoutMs);
      ctx.parkIfLong(active, waiting, timeoutMs ?? Number.POSITIVE_INFINITY);
      const event = await waiting;
      log.append({
        t: now(),
        kind: "event",
        subscription_id: null,
        event_id: event?.event_id ?? null,
      });
      return event;
    },
    unsubscribe: async (id) => {
      if (!subscriptions.has(id, record.id)) {
        throw new HooklineError("bad_request", `unknown subscription "${id}"`);
      }
      subscriptions.remove(id);
    },
    journal: async (step) => {
      await stores.journals.append(record.id, step);
      active.journal?.push(step);
      // Steps may be stored out of order (activities finishing under asyncio.gather).
      active.journal?.sort((a, b) => a.seq - b.seq);
      // The wait of a parked session is now on record: replay can take it from here.
      if ((step.kind === "next_event" || step.kind === "sleep") && active.parked) {
        active.parked.resolve();
      }
    },
  };
}
