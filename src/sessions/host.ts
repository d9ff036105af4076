import { type Clock, isoNow, sleepUntil } from "../clock.ts";
import { HooklineError } from "../errors.ts";
import { compileFilter, FilterError } from "../events/filter.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { ProjectDoc, SessionRecord } from "../model/records.ts";
import type { SessionHost, StepRequest } from "../runtime/runtime.ts";
import type { SessionJournal } from "./journal.ts";
import type { Outcomes } from "./outcomes.ts";
import type { Parkable, Parking } from "./parking.ts";
import type { SdkService } from "./sdk.ts";
import { redactEntry, sourceKey } from "./session-env.ts";
import type { SessionLog } from "./session-log.ts";
import { serveStep } from "./steps.ts";

/** One session as its host sees it (its context, with its project and a way to write it). */
export interface HostSession {
  record: SessionRecord;
  log: SessionLog;
  doc: ProjectDoc;
  redact: (text: string) => string;
  journal: SessionJournal;
  parkable: Parkable;
  /** Writes the record behind (a timer's deadline must outlive the process). */
  persist: () => void;
}

/** The service's pieces every session's host answers from; it owns none of them. */
export interface HostServices {
  outcomes: Outcomes;
  subscriptions: Subscriptions;
  parking: Parking;
  clock: Clock;
  /** Answers the SDK's requests (store, start_session, signal, …); absent: refused. */
  sdk?: Pick<SdkService, "forSession">;
}

/**
 * What a running session asks of the service, answered for one session: its log (prints,
 * activities, outcomes), the final outcome a held request waits for, subscriptions, waits and
 * durable timers. Every step is numbered and (durable) journaled before it is answered; a step
 * the journal holds is answered from it.
 * @example const run = runtime.run(spec, build, createHost(session, services, () => running()));
 */
export function createHost(
  session: HostSession,
  services: HostServices,
  started: () => void,
): SessionHost {
  const { record, log, journal } = session;
  const { subscriptions, clock, parking, outcomes } = services;
  const sdk = services.sdk?.forSession({ ...session, parking });
  const t = () => isoNow(clock);

  async function live(req: StepRequest, seq: number): Promise<unknown> {
    switch (req.kind) {
      case "subscribe": {
        const source = sourceKey(session.doc, req.name);
        if (!source) {
          // AutoKitteh's words, so programs that match on them go on working.
          throw new HooklineError("bad_request", `source "${req.name}" not found in this project`);
        }
        let compiled = null;
        try {
          compiled = req.filter ? compileFilter(req.filter) : null;
        } catch (err) {
          if (err instanceof FilterError) throw new HooklineError("bad_request", err.message);
          throw err;
        }
        const id = subscriptions.add(record.id, source, compiled);
        log.append({
          t: t(),
          kind: "subscribe",
          subscription_id: id,
          source: req.name,
          filter: req.filter,
        });
        return id;
      }
      case "next_event": {
        const waiting = subscriptions.next(record.id, req.ids, req.timeoutMs);
        parking.watch(session.parkable, waiting, req.timeoutMs ?? Number.POSITIVE_INFINITY);
        const event = await waiting;
        log.append({
          t: t(),
          kind: "event",
          subscription_id: null,
          event_id: event?.event_id ?? null,
        });
        return event;
      }
      case "unsubscribe":
        if (!subscriptions.has(req.id, record.id)) {
          throw new HooklineError("bad_request", `unknown subscription "${req.id}"`);
        }
        subscriptions.remove(req.id);
        return null;
      case "sleep": {
        if (record.timer?.seq !== seq) {
          record.timer = { seq, until: clock.now() + req.ms };
          session.persist(); // the deadline outlives this process, and this service
        }
        const waiting = sleepUntil(clock, record.timer.until);
        parking.watch(session.parkable, waiting, record.timer.until - clock.now());
        await waiting;
        return null;
      }
      case "outcome": {
        const other = req.outcome.event_id;
        const entries =
          other && other !== record.event_id
            ? outcomes.offerForEvent(other, req.outcome)
            : outcomes.offer(record.id, req.outcome, record.is_sync);
        for (const entry of entries) log.append(redactEntry(entry, session.redact));
        return null;
      }
      case "activity":
        return null; // its result is the step itself
      default:
        if (sdk) return sdk(req.kind, req.fields);
        throw new HooklineError("unprocessable", `${req.kind}: not served by this service yet`);
    }
  }

  return {
    started,
    print: (text, stream) =>
      log.append({ t: t(), kind: "print", text: session.redact(text), stream }),
    activity: (r) =>
      log.append({
        t: t(),
        kind: "activity",
        function: r.function,
        duration_ms: r.duration_ms,
        ok: r.ok,
        ...(r.error ? { error: session.redact(r.error) } : {}),
      }),
    async step(req) {
      try {
        return await serveStep(journal, req, live);
      } finally {
        // The wait of a parked session is over (on record, or it failed): a replay goes on.
        if (req.kind === "next_event" || req.kind === "sleep" || req.kind === "next_signal") {
          parking.wake(record.id);
        }
      }
    },
  };
}
