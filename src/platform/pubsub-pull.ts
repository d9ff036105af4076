import {
  isPubsubKind,
  PUBSUB_VARS,
  type PubsubKind,
  type PubsubMessage,
  readForms,
  readGmail,
} from "../connections/google-pubsub.ts";
import { connectionVars, type Pulled } from "../connections/index.ts";
import type { KeyedLock } from "../locks.ts";
import type { PubsubTarget } from "../routes/google-pubsub.ts";
import type { WatchParts } from "./google-watch-removal.ts";
import { isPubsubWatched, pubsubCaller } from "./pubsub-watches.ts";

/** How long one instance's claim on a mailbox's read holds the others off (it died mid-read). */
const CLAIM_MS = 5 * 60_000;
/** How long a notification waits for another instance's read of the same mailbox. */
const PULL_WAIT_MS = 15_000;

export type { PubsubTarget };

/**
 * The connections a verified push is for: Gmail's by the mailbox (`emailAddress` of the data,
 * the connection's `user_email`, case aside); Forms' by the watch (`watchId` attribute, one of
 * the connection's `FormResponsesWatchID`, `FormSchemaWatchID`). Every project is looked at.
 * @example await pubsubTargets(parts, "gmail", message) // [{ doc, conn }]
 */
export async function pubsubTargets(
  d: WatchParts,
  kind: PubsubKind,
  m: PubsubMessage,
): Promise<PubsubTarget[]> {
  const found: PubsubTarget[] = [];
  const email = String(m.data.emailAddress ?? "").toLowerCase();
  const watch = m.attributes.watchId ?? "";
  for (const doc of await d.projects.stores.projects.list()) {
    for (const conn of doc.connections ?? []) {
      if (conn.integration !== kind || !isPubsubWatched(conn)) continue;
      const value = (n: string) => doc.vars.find((v) => v.name === `${conn.name}__${n}`)?.value;
      const hit =
        kind === "gmail"
          ? email !== "" && value("user_email")?.toLowerCase() === email
          : watch !== "" &&
            [PUBSUB_VARS.googleforms.responses, PUBSUB_VARS.googleforms.schema].some(
              (n) => value(n) === watch,
            );
      if (hit) found.push({ doc, conn });
    }
  }
  return found;
}

/** One read of a mailbox's history, under the claim on its cursor: `settle` saves and lets go. */
async function readMailbox(d: WatchParts, t: PubsubTarget, m: PubsubMessage, key: string) {
  const from = t.doc.vars.find((v) => v.name === `${t.conn.name}__GmailHistoryID`)?.value ?? "";
  try {
    const caller = await pubsubCaller(d, t.doc, t.conn.name, "gmail");
    if (!caller) throw new Error("no OAuth token to read the mailbox with");
    const vars = connectionVars(t.doc, t.conn.name, (s) => d.projects.secrets.open(s));
    const { events, cursor } = await readGmail(caller, vars, m);
    const settle = async (stored: boolean) => {
      try {
        const write = { name: PUBSUB_VARS.gmail.cursor, value: cursor, secret: false };
        if (stored && cursor !== from)
          await d.store.write(t.doc.project.id, t.conn.name, [write], []);
      } finally {
        await d.cluster.forget?.(key);
      }
    };
    return { events, settle };
  } catch (e) {
    await d.cluster.forget?.(key);
    throw e;
  }
}

/**
 * A Gmail notification read (`users.history.list` from the saved history id), one read of a
 * mailbox at a time across the fleet: the claim on its cursor is held until `settle`, which
 * saves the next cursor once the event is stored; another instance's read waits (15 s at
 * most) and reads on from it.
 */
async function pullMailbox(d: WatchParts, t: PubsubTarget, m: PubsubMessage): Promise<Pulled> {
  const until = d.clock.now() + PULL_WAIT_MS;
  for (;;) {
    const doc = (await d.projects.stores.projects.get(t.doc.project.id)) ?? t.doc;
    const cursor = doc.vars.find((v) => v.name === `${t.conn.name}__GmailHistoryID`)?.value ?? "";
    const key = `gmail-pull:${t.conn.id}:${cursor}`;
    if (await d.cluster.once(key, CLAIM_MS)) return readMailbox(d, { doc, conn: t.conn }, m, key);
    if (d.clock.now() > until) throw new Error("another instance is reading this mailbox");
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * What a verified push makes for one connection: Gmail's `mailbox_change` (its history read
 * from the saved cursor, serialised here per connection and across the fleet by the claim);
 * Forms' `responses` or `schema` (the latest response, the form). Throws a problem in words.
 * @example const { events, settle } = await pubsubPull(parts, locks, target, message); … await settle(true);
 */
export function pubsubPull(
  d: WatchParts,
  locks: KeyedLock,
  t: PubsubTarget,
  m: PubsubMessage,
): Promise<Pulled> {
  if (!isPubsubKind(t.conn.integration)) throw new Error("not a Pub/Sub connection");
  if (t.conn.integration === "googleforms") {
    return (async () => {
      const caller = await pubsubCaller(d, t.doc, t.conn.name, "googleforms");
      if (!caller) throw new Error("no OAuth token to read the form with");
      const vars = connectionVars(t.doc, t.conn.name, (s) => d.projects.secrets.open(s));
      return { events: [await readForms(caller, vars, m)], settle: async () => {} };
    })();
  }
  return new Promise<Pulled>((resolve, reject) => {
    void locks
      .run(`pubsub:${t.conn.id}`, async () => {
        const pulled = await pullMailbox(d, t, m);
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
