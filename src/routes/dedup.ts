import { createHash } from "node:crypto";
import type { Outcome, TriggerRecord } from "../model/records.ts";
import type { DedupRecord, DedupStore } from "./dedup-records.ts";

export type { DedupRecord, DedupStore } from "./dedup-records.ts";
export { redisDedupStore, storageDedupStore } from "./dedup-records.ts";

/** Headers that name a delivery, in the order they are looked for after a trigger's own. */
export const DEDUP_HEADERS = ["Idempotency-Key", "Webhook-Id"] as const;

/** A repeat that finds the first delivery still being stored (on another instance) waits this long. */
const PENDING_WAIT_MS = 2000;

/** The first delivery of a key: it goes on, and tells the outcome when it has one. */
export interface FirstDelivery {
  first: true;
  /** The event is stored and the session started: repeats get this answer from now on. */
  accepted(): Promise<void>;
  /** A sync delivery's final outcome, kept for repeats. */
  answered(outcome: Outcome): Promise<void>;
  /** Nothing was stored (503, a storage error): a repeat may try again. No-op once accepted. */
  failed(): Promise<void>;
}

/** What claiming a key gives: the first delivery of it, or the first one's record (a repeat). */
export type Claim = FirstDelivery | { first: false; record: DedupRecord };

export interface Deduper {
  /** Claims `key` for a delivery that will answer `draft`, or returns the first delivery's answer. */
  begin(key: string, draft: Pick<DedupRecord, "event_id" | "session_id" | "kind">): Promise<Claim>;
  dispose(): Promise<void>;
}

/**
 * Accepts each delivery key once per trigger within `windowMs`. Concurrent repeats in this
 * process wait on an in-process claim (one promise per key in flight, so memory is bounded by
 * the requests in flight); the store makes the claim hold across restarts and, on Redis,
 * across instances.
 * @example const d = createDeduper(storageDedupStore(storage), 86_400_000);
 */
export function createDeduper(store: DedupStore, windowMs: number): Deduper {
  const inflight = new Map<string, Promise<DedupRecord | null>>();

  async function begin(
    key: string,
    draft: Pick<DedupRecord, "event_id" | "session_id" | "kind">,
  ): Promise<Claim> {
    for (;;) {
      const pending = inflight.get(key);
      if (!pending) break;
      const record = await pending;
      if (record) return { first: false, record };
      // The first delivery failed and let the key go: this one may take it.
    }
    let settle!: (rec: DedupRecord | null) => void;
    inflight.set(key, new Promise((r) => (settle = r)));
    const finish = (rec: DedupRecord | null) => {
      inflight.delete(key);
      settle(rec);
    };
    const record: DedupRecord = {
      ...draft,
      done: false,
      outcome: null,
      expires_at: Date.now() + windowMs,
    };
    let held: DedupRecord | null;
    try {
      held = await store.claim(key, record);
    } catch (err) {
      finish(null);
      throw err;
    }
    if (held) {
      const done = held.done ? held : await waitDone(store, key, held);
      finish(done);
      return { first: false, record: done };
    }
    return firstDelivery(store, key, record, finish);
  }

  return {
    begin,
    dispose: () => store.dispose(),
  };
}

/**
 * The key of a request to a webhook's `trigger`: its first delivery header that has a value
 * (the trigger's `dedup_header`, then DEDUP_HEADERS), or null when it carries none.
 * @example webhookDedupKey(trigger, new Headers({ "Idempotency-Key": "k1" })) // "trg_…:3f…"
 */
export function webhookDedupKey(trigger: TriggerRecord, headers: Headers): string | null {
  const names = [trigger.dedup_header, ...DEDUP_HEADERS].filter((n): n is string => !!n);
  for (const name of names) {
    const value = headers.get(name);
    if (value === null || value === "") continue;
    return keyOf(trigger.id, `${name.toLowerCase()}\n${value}`);
  }
  return null;
}

/**
 * The key of a connection's delivery by the id its provider gives it (X-GitHub-Delivery,
 * Slack's event_id, webhook-id), or null for a delivery without one.
 * @example connectionKey("con_1", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
 */
export function connectionKey(connectionId: string, delivery: string | null): string | null {
  return delivery ? keyOf(connectionId, delivery) : null;
}

/** A key under its owner: hashed, so its size does not hang on what the sender put in it. */
function keyOf(owner: string, text: string): string {
  return `${owner}:${createHash("sha256").update(text).digest("hex").slice(0, 40)}`;
}

/** A repeat whose first delivery is still being stored elsewhere polls until it is done. */
async function waitDone(store: DedupStore, key: string, record: DedupRecord): Promise<DedupRecord> {
  const until = Date.now() + PENDING_WAIT_MS;
  let rec = record;
  while (!rec.done && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
    rec = (await store.get(key)) ?? rec;
  }
  return rec;
}

/**
 * The claim of the first delivery of `key`: it writes `record` as the delivery goes on, and
 * `finish` lets the repeats waiting in this process go (with the answer, or null to retry).
 */
function firstDelivery(
  store: DedupStore,
  key: string,
  record: DedupRecord,
  finish: (rec: DedupRecord | null) => void,
): FirstDelivery {
  let accepted = false;
  return {
    first: true,
    async accepted() {
      accepted = true;
      record.done = true;
      try {
        await store.update(key, record);
      } finally {
        finish({ ...record });
      }
    },
    async answered(outcome) {
      record.outcome = {
        status_code: outcome.status_code,
        headers: outcome.headers,
        body: outcome.body ? outcome.body.toString("base64") : null,
      };
      await store.update(key, record);
    },
    async failed() {
      if (accepted) return;
      try {
        await store.release(key);
      } finally {
        finish(null);
      }
    },
  };
}
