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
import { claimedRead } from "./claimed-read.ts";
import type { WatchParts } from "./google-watch-removal.ts";
import { isPubsubWatched, pubsubCaller } from "./pubsub-watches.ts";

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
  const cursorVar = PUBSUB_VARS.gmail.cursor;
  return claimedRead(d, locks, {
    lock: `pubsub:${t.conn.id}`,
    busy: "this mailbox",
    async find() {
      const doc = (await d.projects.stores.projects.get(t.doc.project.id)) ?? t.doc;
      const cursor = doc.vars.find((v) => v.name === `${t.conn.name}__${cursorVar}`)?.value ?? "";
      const claim = `gmail-pull:${t.conn.id}:${cursor}`;
      const at = { projectId: doc.project.id, connection: t.conn.name, cursorVar, cursor, claim };
      return { target: { doc, conn: t.conn }, ...at };
    },
    async read(target) {
      const caller = await pubsubCaller(d, target.doc, target.conn.name, "gmail");
      if (!caller) throw new Error("no OAuth token to read the mailbox with");
      const vars = connectionVars(target.doc, target.conn.name, (s) => d.projects.secrets.open(s));
      return readGmail(caller, vars, m);
    },
  });
}
