import type { InboundEvent, Pulled } from "../connections/index.ts";
import type { KeyedLock } from "../locks.ts";
import type { WatchParts } from "./google-watch-removal.ts";

/** How long one instance's claim on a connection's read holds the others off (it died mid-read). */
const CLAIM_MS = 5 * 60_000;
/** How long a notification waits for another instance's read of the same connection. */
const PULL_WAIT_MS = 15_000;

/** A connection's cursor as stored, what reads on from it, and the claim on reading it. */
export interface CursorAt<T> {
  target: T;
  projectId: string;
  connection: string;
  /** The var the cursor is kept in (without `<connection>__`), and its value now. */
  cursorVar: string;
  cursor: string;
  /** The fleet-wide claim key: one per connection and cursor. */
  claim: string;
}

/** How one kind of notification is read: where its cursor is, and what a read from it gives. */
export interface ClaimedRead<T> {
  /** This instance's lock: two notifications taken here read one after the other. */
  lock: string;
  /** What the "another instance is reading …" error names. */
  busy: string;
  /** The connection's cursor as stored now; null when there is nothing to read (it is gone). */
  find: () => Promise<CursorAt<T> | null>;
  /** The provider read from the cursor: its events and the next cursor. */
  read: (target: T) => Promise<{ events: InboundEvent[]; cursor: string }>;
}

/**
 * What changed for one connection since its cursor, one read at a time across the fleet (Google's
 * watch channels, Gmail's mailbox): the claim on the connection's cursor (the database's, on
 * PostgreSQL) is held from the read until `settle`, which saves the next cursor once the events
 * are stored (not when they were not: the provider's retry reads them again), then lets the
 * claim go. Another instance's notification waits for it (15 s at most), then reads on from the
 * new cursor, so one change is never two events. On this instance the lock is held until
 * `settle` too.
 * @example const { events, settle } = await claimedRead(parts, locks, spec); … await settle(true);
 */
export function claimedRead<T>(
  d: Pick<WatchParts, "cluster" | "clock" | "store">,
  locks: KeyedLock,
  spec: ClaimedRead<T>,
): Promise<Pulled> {
  return new Promise<Pulled>((resolve, reject) => {
    void locks
      .run(spec.lock, async () => {
        const pulled = await claimAndRead(d, spec);
        let release = () => {};
        const settled = new Promise<void>((r) => {
          release = r;
        });
        resolve({ events: pulled.events, settle: (s) => pulled.settle(s).finally(release) });
        await settled;
      })
      .catch(reject);
  });
}

async function claimAndRead<T>(
  d: Pick<WatchParts, "cluster" | "clock" | "store">,
  spec: ClaimedRead<T>,
): Promise<Pulled> {
  const until = d.clock.now() + PULL_WAIT_MS;
  for (;;) {
    const at = await spec.find();
    if (!at) return { events: [], settle: async () => {} };
    if (await d.cluster.once(at.claim, CLAIM_MS)) {
      // The reader before may have saved the next cursor and let go of this one's claim between
      // the look above and the claim: read on from the cursor as it is now, claimed.
      const now = await spec.find();
      if (now?.cursor === at.cursor) return readClaimed(d, spec, now);
      await d.cluster.forget?.(at.claim);
      continue;
    }
    if (d.clock.now() > until) throw new Error(`another instance is reading ${spec.busy}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One read under the claim: `settle` saves the next cursor (once stored) and lets go. */
async function readClaimed<T>(
  d: Pick<WatchParts, "cluster" | "store">,
  spec: ClaimedRead<T>,
  at: CursorAt<T>,
): Promise<Pulled> {
  try {
    const { events, cursor } = await spec.read(at.target);
    const settle = async (stored: boolean) => {
      try {
        const write = { name: at.cursorVar, value: cursor, secret: false };
        if (stored && cursor !== at.cursor) {
          await d.store.write(at.projectId, at.connection, [write], []);
        }
      } finally {
        await d.cluster.forget?.(at.claim);
      }
    };
    return { events, settle };
  } catch (e) {
    await d.cluster.forget?.(at.claim);
    throw e;
  }
}
