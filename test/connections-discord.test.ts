import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../src/model/records.ts";
import { connectionProject } from "./support/connection-project.ts";
import { type StandInDiscord, standInDiscord } from "./support/discord-gateway.ts";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/**
 * A discord connection through the real service and real Python, against a stand-in Discord on
 * loopback (the connection's `base_url`: `GET /gateway/bot`, then its gateway): once the bot's
 * token is set the service opens the bot's gateway, and each MESSAGE_CREATE dispatch starts the
 * trigger of AutoKitteh's event type for it; a socket the gateway drops is resumed, the
 * dispatches made meanwhile arriving once each; the gateway closes when the token changes and
 * when the connection goes.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-discord");
const TOKEN = "discord-bot-t0ken";
const PROJECT = "discord_events";

const message = (id: string, content: string, author = { id: "7", username: "alice" }) => ({
  id,
  channel_id: "c-1",
  content,
  author,
});

describe("connections: Discord's gateway", () => {
  let discord: StandInDiscord;
  beforeAll(async () => {
    discord = await standInDiscord(TOKEN);
  });
  afterAll(() => discord.close());
  const emu = useEmulator();
  const project = connectionProject(emu, PROJECT, FIXTURE);
  const { deploy } = project;
  const setVar = (name: string, value: string, secret = false) =>
    project.setVar("bot", name, value, secret);
  const events = async () =>
    (await emu.api<{ events: unknown[] }>(`/events?project=${PROJECT}&limit=1000`)).events.length;
  /** Every ended session's prints, sorted, once `n` sessions have ended (order: the unit test's). */
  const prints = async (n: number) => {
    const ended = await until(`${n} sessions to end`, async () => {
      const { sessions } = await emu.api<{ sessions: SessionRecord[] }>(
        `/sessions?project=${PROJECT}&limit=1000`,
      );
      // A listing read while a session's index entry moves may name it twice: once each.
      const ids = new Map(sessions.map((s) => [s.id, s]));
      const done = [...ids.values()].filter((s) => s.state !== "created" && s.state !== "running");
      return done.length >= n ? done : undefined;
    });
    expect(ended.map((s) => s.state)).toEqual(ended.map(() => "completed"));
    return (await Promise.all(ended.map((s) => emu.prints(s.id)))).flat().sort();
  };

  it("opens the bot's gateway once its token is set, and runs the trigger for a message", async () => {
    await deploy();
    await setVar("base_url", discord.api);
    expect(discord.identifies).toEqual([]);
    await setVar("BotToken", TOKEN, true);
    await until("the bot's identify", () => discord.identifies.length === 1);
    expect(discord.identifies[0]!.d).toMatchObject({ token: TOKEN, intents: 3276799 });
    await until("READY", () => discord.open === 1);
    discord.dispatch("MESSAGE_CREATE", message("m1", "hello bot"));
    expect(await prints(1)).toEqual(["message_create: 'hello bot' from alice in c-1"]);
  });

  it("resumes a dropped socket: the dispatches made meanwhile arrive, each once", async () => {
    discord.drop();
    discord.dispatch("MESSAGE_CREATE", message("m2", "while down"));
    discord.dispatch("MESSAGE_REACTION_ADD", { user_id: "7", emoji: { name: "👍" } });
    await until("the resume", () => discord.resumes.length === 1);
    expect(discord.resumes[0]!.d).toEqual({ token: TOKEN, session_id: "sess-1", seq: 2 });
    discord.dispatch("MESSAGE_CREATE", message("m3", "after"));
    expect(await prints(4)).toEqual([
      "message_create: 'after' from alice in c-1",
      "message_create: 'hello bot' from alice in c-1",
      "message_create: 'while down' from alice in c-1",
      "message_reaction_add: 👍 by 7",
    ]);
    expect(await events()).toBe(4);
    expect(discord.identifies).toHaveLength(1);
  });

  it("skips the bot's own messages and dispatches AutoKitteh does not forward", async () => {
    discord.dispatch("MESSAGE_CREATE", message("m4", "mine", { id: "4242", username: "hookbot" }));
    discord.dispatch("TYPING_START", { user_id: "7", channel_id: "c-1" });
    discord.dispatch("MESSAGE_CREATE", message("m5", "yours"));
    expect(await prints(5)).toContain("message_create: 'yours' from alice in c-1");
    expect(await events()).toBe(5);
  });

  it("closes the gateway when the token changes, and when the connection goes", async () => {
    await setVar("BotToken", "another-token", true);
    // The stand-in knows only TOKEN: the new token's gateway URL is refused, the old socket closed.
    await until("the old socket closed", () => discord.open === 0);
    await setVar("BotToken", TOKEN, true);
    await until("a new identify", () => discord.identifies.length === 2 && discord.open === 1);
    const manifest = [
      "version: v1",
      "project:",
      `  name: ${PROJECT}`,
      "  triggers:",
      "    - {name: hook, webhook: {}, call: program.py:on_message}",
    ].join("\n");
    await deploy(manifest);
    await until("the socket closed", () => discord.open === 0);
    expect(discord.identifies).toHaveLength(2);
  });

  it("refuses a request at the connection's inbound address, storing nothing", async () => {
    const { connections } = await deploy();
    const before = await events();
    const res = await fetch(emu.url + connections[0]!.inbound_path, { method: "POST", body: "{}" });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await events()).toBe(before);
  });
});
