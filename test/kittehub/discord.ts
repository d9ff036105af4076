import type { ConnectionView } from "../../src/wire/views.ts";
import { type StandInDiscord, standInDiscord } from "../support/discord-gateway.ts";
import { describe, type Sent } from "./fire.ts";
import type { Fire } from "./plan.ts";
import type { EventContext } from "./secrets.ts";
import type { StandIn } from "./stand-in.ts";

/** The bot token the stand-in's discord preset gives a connection (`api.env`). */
const TOKEN = "stand-in-bot-token";
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Discord's gateway on loopback (test/support/discord-gateway.ts), its URL answered by the
 * stand-in API's `GET /api/v10/gateway/bot`, where a discord connection's `base_url` sends the
 * service's gateway keeper. Returns the delivery and a close.
 */
export async function startDiscord(api: StandIn): Promise<{
  deliver: NonNullable<EventContext["discord"]>;
  close: () => Promise<void>;
}> {
  const gateway: StandInDiscord = await standInDiscord(TOKEN);
  gateway.heartbeatMs = 30_000;
  await api.routes({
    "GET /api/v10/gateway/bot": { url: gateway.url.replace("http", "ws"), shards: 1 },
  });
  const deliver = async (ctx: EventContext, f: Fire, conn: ConnectionView): Promise<Sent> => {
    const what = describe(f);
    const deadline = Date.now() + 20_000;
    // The newest bot session is this connection's: the service identifies once its token is set.
    while (gateway.open === 0 || gateway.identifies.length === 0) {
      if (Date.now() > deadline) {
        const c = (await ctx.svc.connections(conn.project)).find((x) => x.name === conn.name);
        const detail = `harness: the service opened no gateway (${c?.status.state} ${c?.status.needs.join(", ")})`;
        return { what, accepted: false, detail };
      }
      await sleep(300);
    }
    await sleep(500); // READY reaches the keeper before the dispatch
    gateway.dispatch((f.kind || "MESSAGE_CREATE").toUpperCase(), f.payload ?? {});
    return {
      what,
      accepted: true,
      detail: `dispatched on gateway session ${gateway.identifies.length}`,
    };
  };
  return { deliver, close: () => gateway.close() };
}
