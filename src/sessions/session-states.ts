import { type Clock, isoNow } from "../clock.ts";
import type { SessionEnd, SessionState } from "../model/records.ts";
import type { LifecycleEvent, SessionChannel } from "./channel.ts";
import type { SessionContext, SessionsHere } from "./context.ts";
import type { Parking } from "./parking.ts";
import { type Abandoned, applyState, finalState, INTERRUPTED } from "./session-record.ts";
import type { SessionWriter } from "./writer.ts";

export interface StatesDeps {
  here: SessionsHere;
  channel: SessionChannel;
  writer: SessionWriter;
  parking: Parking;
  clock: Clock;
  /** Whether the service is stopping (an end it causes is worded so). */
  closing: () => boolean;
}

/**
 * A session's state changes as they are written and told: applied to its record and log, stored
 * through the writer, and told on the session channel; an end or a leave also takes the session
 * off the sessions here. The lifecycle decides which change comes; this makes it so.
 * @example const states = sessionStates(deps); await states.finish(s, { state: "completed" });
 */
export function sessionStates(d: StatesDeps) {
  const setState = (s: SessionContext, state: SessionState, detail?: string) => {
    applyState(s.record, s.log, isoNow(d.clock), state, detail);
    d.writer.persist(s.record.id);
  };
  /** The session is no longer here. */
  const forget = (s: SessionContext) => {
    d.here.delete(s.record.id);
    d.parking.forget(s.record.id);
  };
  /**
   * Tells the channel; an end or a leave closes the session's writes first. Returns what the
   * event carries as `written`.
   */
  const tell = (s: SessionContext, type: LifecycleEvent["type"], end?: SessionEnd) => {
    const id = s.record.id;
    const written = type === "started" ? d.writer.written(id) : d.writer.close(id);
    d.channel.tell({ type, record: s.record, written, ...(end && { end }) });
    return written;
  };
  return {
    tell,

    /**
     * Its process has it: `running`. A session that would run again if it were found `created`
     * after a crash (one nobody holds a request for, and not durable: a durable one replays its
     * journal) starts only once that state is stored: so it runs once, never twice.
     */
    running(s: SessionContext, detail?: string): Promise<void> | undefined {
      setState(s, "running", detail);
      const { record } = s;
      // Alone, a durable or synchronous session may begin before its write lands (a durable one
      // replays, a sync one's request dies with the instance). In a fleet it waits: another
      // instance may own it by now, and the write that storage refuses then stops it here.
      if ((record.durable || record.is_sync) && !d.writer.fenced) return undefined;
      return d.writer.written(record.id);
    },

    /** Ends the session with `end`; resolves once that end is stored. */
    finish(s: SessionContext, end: SessionEnd): Promise<void> {
      const { state, detail, error } = finalState(end, d.closing(), s.redact);
      if (error) s.record.error = error;
      setState(s, state, detail);
      forget(s);
      return tell(s, "ended", end);
    },

    /**
     * The service is stopping: leave the session as it is stored (`running`, or `created` if it
     * never started) so the next start, or another instance, takes it up.
     */
    leave(s: SessionContext, text = "service stopping; resumes at next start"): void {
      s.log.append({ t: isoNow(d.clock), kind: "warning", text });
      d.writer.persist(s.record.id);
      forget(s);
      void tell(s, "left");
    },

    /** Taken over by another instance: no longer here, nothing written; told as `left`. */
    drop(s: SessionContext): void {
      forget(s);
      void d.writer.close(s.record.id);
      d.channel.tell({ type: "left", record: s.record, written: Promise.resolve() });
    },

    /**
     * Ends sessions nobody runs here (`error`, "interrupted" unless another end is given): their
     * records and logs in one commit, then the channel hears each end. Resolves once stored.
     */
    endAll(sessions: Abandoned[]): Promise<void> {
      const t = isoNow(d.clock);
      const ended = sessions.map(({ record, log, end = INTERRUPTED }) => {
        const { state, detail, error } = finalState(end, d.closing(), (text) => text);
        if (error) record.error = error;
        applyState(record, log, t, state, detail);
        return { record, log, end };
      });
      const written = d.writer.endAll(ended);
      for (const { record, end } of ended) d.channel.tell({ type: "ended", record, written, end });
      return written;
    },
  };
}

export type SessionStates = ReturnType<typeof sessionStates>;
