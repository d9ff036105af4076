import type { SessionRecord } from "../model/records.ts";
import { Fenced } from "../storage/fence.ts";
import type { SessionChange } from "../storage/record-types.ts";
import { toUnavailable } from "../storage/unavailable.ts";
import type { SessionLog } from "./session-log.ts";
import type { WriterOptions } from "./writer.ts";

// The writes of sessions not open in the writer: a new session's first write, and the ends of
// sessions nobody runs here (recovery's, a takeover's). Each is one commit of its own, in turn.

/**
 * A new session's first write: its record and, given, the event that starts it and the
 * journal steps it starts with (a re-run's), in one commit, with its owner row (epoch 1) in a
 * fleet on PostgreSQL. `texts`: the record's and event's JSON text, where the caller made it
 * (SessionChange). Rejects (`StorageUnavailable`) when that commit failed, and then nothing of
 * it is stored.
 * @example await createSession(opts, record, { event });
 */
export async function createSession(
  opts: WriterOptions,
  record: SessionRecord,
  { event, steps, texts }: Pick<SessionChange, "event" | "steps" | "texts"> = {},
): Promise<void> {
  const { owners } = opts;
  try {
    const first = steps?.length ? { steps } : {}; // a re-run's journal, as it reuses it
    const own = owners?.create(record.id); // owned here (epoch 1) from this very write
    const change = { record, was: null, event, texts, ...first, ...(own && { own }) };
    await opts.stores.sessions.commit(record.id, change);
  } catch (err) {
    owners?.forget(record.id);
    throw toUnavailable(err);
  }
}

/**
 * The ends of sessions that are not open here (recovery's interrupted ones): each record, its
 * index entry (from wherever it is: the state read may be stale, a stalled owner's write
 * landing after the read), and its log; in one commit, or on PostgreSQL one fenced commit
 * each. Resolves once stored; a failed commit is logged and rejects, having changed nothing
 * (the sessions stay as stored: the next recovery, or their next owner in a fleet, ends them).
 * @example await endAll(opts, [{ record, log }]);
 */
export async function endAll(
  opts: WriterOptions,
  ended: { record: SessionRecord; log: SessionLog }[],
): Promise<void> {
  const changes = ended.map(({ record, log }) => ({
    id: record.id,
    change: { record: { ...record }, was: undefined, log: [...log.entries] },
  }));
  try {
    if (opts.owners) await endOwned(opts, changes);
    else await opts.stores.sessions.commitMany(changes);
  } catch (err) {
    opts.log.error(`${ended.length} ended sessions: write failed`, err);
    throw err;
  }
}

/**
 * A fleet on PostgreSQL: each end in a fenced statement of its own that removes the owner row.
 * One refused (another instance owns it now) is that one's to write, not a failure.
 */
async function endOwned(
  opts: WriterOptions,
  changes: { id: string; change: SessionChange }[],
): Promise<void> {
  const owners = opts.owners!;
  const results = await Promise.allSettled(
    changes.map(async ({ id, change }) => {
      const own = owners.write(id, true);
      if (!own) return; // not ours (any more): its owner ends it
      try {
        await opts.stores.sessions.commit(id, { ...change, own });
        owners.forget(id);
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        owners.fenced(id);
      }
    }),
  );
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}
