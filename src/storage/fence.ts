/**
 * What a session write carries for the store that decides who owns sessions (PostgreSQL in a
 * fleet): the store checks it in the write's own statement. Other stores serve one instance
 * and ignore it.
 *
 * - `queue`: a new asynchronous session; its owner row is made queued (no owner) in the same
 *   statement as its record, for any instance to take; its NOTIFY names `waker`, the instance
 *   to take it (the others let it pass), or nobody (every instance looks).
 * - `own`: a new session owned by `owner` from its first write (epoch 1).
 * - `fence`: a write of a session `owner` holds at `epoch`; it lands only while the owner row
 *   still says so. `release` removes the owner row with it (the session's end).
 * @example const w: OwnerWrite = { session: "ses_…", kind: "fence", owner: "a1b2", epoch: 2 };
 */
export type OwnerWrite =
  | { session: string; kind: "queue"; waker?: string }
  | { session: string; kind: "own"; owner: string }
  | { session: string; kind: "fence"; owner: string; epoch: number; release?: boolean };

/**
 * Keys written once: a journal step stored again must hold the same value. Another value is a
 * `StepClash`, never an overwrite; only a pending retry's step (`retry_at` set) is replaced, by
 * its next attempt or its result.
 */
export const WRITE_ONCE_PREFIX = "journals:";

/**
 * The store refused a session write: its owner row names another owner or a later epoch (the
 * session was taken over while this instance stalled or was cut off). Nothing was written.
 * @example if (err instanceof Fenced) lifecycle.fence(err.sessionId);
 */
export class Fenced extends Error {
  readonly sessionId: string;
  constructor(sessionId: string) {
    super(`session ${sessionId}: the write was refused: another instance owns the session now`);
    this.name = "Fenced";
    this.sessionId = sessionId;
  }
}

/**
 * A journal step written again with another value: two runs of one session disagree. Nothing
 * of the write was stored.
 * @example throw new StepClash("ses_…", ["journals:ses_…:00000003"]);
 */
export class StepClash extends Error {
  constructor(sessionId: string, keys: string[]) {
    super(
      `session ${sessionId}: journal steps stored already with another value: ${keys.join(", ")}`,
    );
    this.name = "StepClash";
  }
}
