import type { SessionEnd, SessionRecord } from "../model/records.ts";

/**
 * What happened to a session here: it `started`; it `ended` (record final); or it `left`
 * (the service stops, a durable session stays `running` for the next start to resume).
 * `written` resolves once its record and log are in storage.
 */
export interface LifecycleEvent {
  type: "started" | "ended" | "left";
  record: SessionRecord;
  written: Promise<void>;
  /** "ended": how the run ended (a completed one carries the handler's return value). */
  end?: SessionEnd;
}

/**
 * The session channel: the lifecycle tells it when a session starts here, ends, or leaves; the
 * pieces that care listen (the held requests, the cluster link, the shared queue, the SDK's
 * signal queues, retention, the UI), and anyone may wait for one session's end. Built before
 * the lifecycle that tells it and the pieces that hear it, so none of them reaches another.
 * @example
 * const channel = new SessionChannel();
 * channel.onEnd("ses_1", (record) => record.state); channel.tell({ type: "ended", record, written });
 */
export class SessionChannel {
  #listeners = new Set<(e: LifecycleEvent) => void>();
  #ends = new Map<string, Set<(e: LifecycleEvent) => void>>();

  /** Calls `listener` with everything told from now on; returns a way to stop. */
  listen(listener: (e: LifecycleEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Calls `onEnd` with the record once the session ends here or leaves this instance (only
   * for a session running here: the caller checks). Returns a way to stop waiting.
   */
  onEnd(id: string, onEnd: (record: SessionRecord) => void): () => void {
    return this.#wait(id, (e) => onEnd(e.record));
  }

  /**
   * The record once the session has ended here (or left this instance) and that end is
   * stored: its record and log as they were at the end are written. Only for a session running
   * here: the caller checks.
   */
  ended(id: string): Promise<SessionRecord> {
    return new Promise((resolve) =>
      this.#wait(id, (e) => {
        // An end storage refused (recovery's, to be tried again) is still this end.
        const done = () => resolve(e.record);
        void e.written.then(done, done);
      }),
    );
  }

  /**
   * What the lifecycle says: the listeners hear it first; then an end (or a leave) settles the
   * waits, so whoever waits finds the listeners told (retention counts a session before
   * `ended` resolves).
   */
  tell(e: LifecycleEvent): void {
    for (const l of this.#listeners) l(e);
    if (e.type === "started") return;
    const waiting = this.#ends.get(e.record.id);
    this.#ends.delete(e.record.id);
    for (const onEnd of waiting ?? []) onEnd(e);
  }

  #wait(id: string, onEnd: (e: LifecycleEvent) => void): () => void {
    const waiting = this.#ends.get(id) ?? new Set();
    this.#ends.set(id, waiting);
    waiting.add(onEnd);
    return () => waiting.delete(onEnd);
  }
}
