import type { EventRecord, SessionRecord } from "../model/records.ts";
import type { Admission } from "../sessions/ingest.ts";
import type { OutcomeWait } from "../sessions/outcomes.ts";
import type { StoredJson } from "../storage/stored-json.ts";

/**
 * What the front door's thread tells the session host. Messages on one port arrive in the order
 * they were sent.
 */
export type FrontMessage =
  /** The front listens (its port, when it was asked for 0). */
  | { t: "listening"; port: number }
  /** It could not listen (the address is taken): the service does not start. */
  | { t: "failed"; message: string }
  /**
   * A session whose record (`created`) and event the front committed: run it here. `holdMs`:
   * a request waits for its first final outcome that long (a sync webhook), answered `outcome`.
   * Both as the JSON text stored (`StoredJson`): a string crosses to the host as one copy,
   * where an object is walked field by field on each side. `landing`: its commit is still on
   * its way (a held session's, handed over once logged): the host writes nothing of the
   * session until `landed` names it.
   */
  | {
      t: "adopt";
      id: string;
      record: StoredJson<SessionRecord>;
      event: StoredJson<EventRecord>;
      holdMs?: number;
      landing?: true;
    }
  /** The commit of session `id`, handed over `landing`, is in the store. */
  | { t: "landed"; id: string }
  /** May a synchronous session start now (the host's admission, which knows the runtime)? */
  | { t: "admit"; id: number }
  /** An event stored that started no session (retention counts it). */
  | { t: "event" }
  /** An event for the subscribers of `source` (`<project_id>:<name>`), as ingest publishes it. */
  | { t: "publish"; source: string; event: StoredJson<EventRecord> }
  /** A line for the service's log. */
  | { t: "log"; level: "info" | "warn" | "error"; text: string }
  /** The front's metrics (prom-client's JSON), the answer to `metrics`. */
  | { t: "metrics"; id: number; json: unknown[] }
  /** The front's server has closed. */
  | { t: "closed" };

/** What the session host tells the front door's thread. */
export type HostMessage =
  /** The answer to `admit`: a session admitted is counted as arriving. */
  | { t: "admitted"; id: number; admission: Admission }
  /** A held session's first final outcome, its end, or the time-out (see `adopt`'s `holdMs`). */
  | { t: "outcome"; sessionId: string; wait: OutcomeWait }
  /** A project changed: what its addresses lead to is read again. */
  | { t: "invalidate"; projectId: string }
  /** Asks for the front's metrics, for `/metrics`. */
  | { t: "metrics"; id: number }
  /**
   * Stop listening; connections still open after `graceMs` are closed (0: at once). Answered
   * with `closed`.
   */
  | { t: "close"; graceMs: number };

/**
 * The front's messages as they cross to the host: gathered over one turn of the front's event
 * loop and sent as one array, in order (a burst's accepts cost the host one wake, not one each).
 * A turn posts at most as many as it took requests and wrote lines, so the array is bounded by
 * what one turn reads. `afterSent(fn)` runs `fn` once what was posted so far has been sent (a
 * request passed on to the host then comes after the hand-overs before it).
 * @example const post = gatherPosts((batch) => port.postMessage(batch)); post({ t: "event" });
 */
export function gatherPosts(send: (batch: FrontMessage[]) => void) {
  let batch: FrontMessage[] | null = null;
  let then: (() => void)[] = [];
  const flush = () => {
    const out = batch!;
    const after = then;
    batch = null;
    then = [];
    send(out);
    for (const fn of after) fn();
  };
  const post = (m: FrontMessage): void => {
    if (batch) batch.push(m);
    else {
      batch = [m];
      setImmediate(flush);
    }
  };
  return Object.assign(post, {
    afterSent(fn: () => void): void {
      if (batch) then.push(fn);
      else fn();
    },
  });
}
