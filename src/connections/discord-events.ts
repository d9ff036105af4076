import type { InboundEvent, Verdict } from "./verdict.ts";

/**
 * The gateway dispatches AutoKitteh forwards, by Discord's name, with AutoKitteh's event type
 * for each and where its initiator's user id is ("" for a deleted message, which has none).
 */
const FORWARDED: Record<string, { type: string; initiator: (d: Data) => unknown }> = {
  MESSAGE_CREATE: { type: "message_create", initiator: (d) => author(d) },
  MESSAGE_UPDATE: { type: "message_update", initiator: (d) => author(d) },
  MESSAGE_DELETE: { type: "message_delete", initiator: () => "" },
  MESSAGE_REACTION_ADD: { type: "message_reaction_add", initiator: (d) => d.user_id },
  MESSAGE_REACTION_REMOVE: { type: "message_reaction_remove", initiator: (d) => d.user_id },
  PRESENCE_UPDATE: { type: "presence_update", initiator: (d) => (d.user as Data)?.id },
  THREAD_CREATE: { type: "thread_create", initiator: (d) => d.owner_id },
  THREAD_UPDATE: { type: "thread_update", initiator: (d) => d.owner_id },
  THREAD_DELETE: { type: "thread_delete", initiator: (d) => d.owner_id },
};

type Data = Record<string, unknown>;

const author = (d: Data) => (d.author as Data | undefined)?.id;

/**
 * A gateway dispatch as a connection's event: AutoKitteh's event type and the dispatch's data
 * as Discord sent it; null for a dispatch AutoKitteh does not forward, and for one the bot
 * `botId` itself initiated (its own messages do not start its own sessions).
 * @example discordEvent("MESSAGE_CREATE", { content: "hi", author: { id: "7" } }, "1") // { event_type: "message_create", data: {…} }
 */
export function discordEvent(name: string, data: unknown, botId: string): InboundEvent | null {
  const kind = FORWARDED[name];
  if (!kind || typeof data !== "object" || data === null) return null;
  const initiator = kind.initiator(data as Data);
  if (botId && initiator !== undefined && String(initiator) === botId) return null;
  return { event_type: kind.type, data };
}

/** A request at a discord connection's inbound address: its events come over the gateway. */
export const verifyDiscord = (): Verdict => ({
  kind: "refuse",
  status: 403,
  detail: "a discord connection's events come over Discord's gateway, not to this address",
});
