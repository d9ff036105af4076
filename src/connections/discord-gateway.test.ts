import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type StandInDiscord, standInDiscord } from "../../test/support/discord-gateway.ts";
import { until } from "../../test/support/until.ts";
import { discordEvent } from "./discord-events.ts";
import { DISCORD_INTENTS, DiscordGateway, gatewayUrl } from "./discord-gateway.ts";

const TOKEN = "bot-t0ken";

describe("DiscordGateway against a stand-in gateway", () => {
  let discord: StandInDiscord;
  let gateway: DiscordGateway | null = null;
  const got: { name: string; seq: number; content: string }[] = [];
  const lines: string[] = [];

  beforeEach(async () => {
    discord = await standInDiscord(TOKEN);
    got.length = 0;
    lines.length = 0;
  });
  afterEach(async () => {
    await gateway?.stop();
    gateway = null;
    await discord.close();
  });

  const connect = async () => {
    gateway = new DiscordGateway({
      token: TOKEN,
      url: () => gatewayUrl(discord.api, TOKEN),
      onDispatch: (name, data, seq) => {
        got.push({ name, seq, content: String((data as { content?: string }).content) });
      },
      log: (line) => lines.push(line),
      backoffMs: 10,
    });
    gateway.start();
    await until("READY", () => gateway!.botId === "4242");
  };
  const message = (content: string) => {
    discord.dispatch("MESSAGE_CREATE", { id: content, content, author: { id: "7" } });
  };
  const contents = () => got.map((g) => g.content);

  it("identifies with the token and every intent, then hands on dispatches", async () => {
    await connect();
    expect(discord.urlReads).toBe(1);
    expect(discord.identifies).toEqual([
      {
        op: 2,
        d: { token: TOKEN, intents: DISCORD_INTENTS, properties: expect.any(Object) },
      },
    ]);
    message("one");
    await until("the dispatch", () => got.length === 1);
    expect(got).toEqual([{ name: "MESSAGE_CREATE", seq: 2, content: "one" }]);
  });

  it("resumes a dropped socket from its last sequence: nothing lost, nothing twice", async () => {
    await connect();
    message("one");
    await until("the first dispatch", () => got.length === 1);
    discord.drop();
    message("two"); // while the socket is down: kept for the resume
    message("three");
    await until("the resume's dispatches", () => got.length === 3);
    message("four");
    await until("a dispatch after the resume", () => got.length === 4);
    expect(contents()).toEqual(["one", "two", "three", "four"]);
    expect(discord.resumes).toEqual([{ op: 6, d: { token: TOKEN, session_id: "sess-1", seq: 2 } }]);
    expect(discord.identifies).toHaveLength(1);
  });

  it("identifies anew when the resume is refused", async () => {
    await connect();
    discord.forgetSessions();
    discord.drop();
    await until("a second identify", () => discord.identifies.length === 2);
    expect(discord.resumes).toHaveLength(1);
    await until(
      "READY again",
      () => discord.open === 1 && lines.filter((l) => l.includes("ready")).length === 2,
    );
    message("after");
    await until("the new session's dispatch", () => got.length === 1);
    expect(got).toEqual([{ name: "MESSAGE_CREATE", seq: 2, content: "after" }]);
  });

  it("identifies anew at the bot's URL when the resume URL does not answer", async () => {
    discord.resumeUrl = "ws://127.0.0.1:1"; // nothing listens there
    await connect();
    discord.drop();
    await until("a second identify", () => discord.identifies.length === 2);
    expect(discord.resumes).toEqual([]);
    expect(discord.urlReads).toBe(2);
  });

  it("reconnects and resumes at opcode 7, and identifies anew at opcode 9 (not resumable)", async () => {
    await connect();
    discord.say(7);
    await until("the resume", () => discord.resumes.length === 1);
    expect(discord.identifies).toHaveLength(1);
    await until("RESUMED", () => lines.some((l) => l.includes("resumed")));
    discord.say(9, false);
    await until("a new identify", () => discord.identifies.length === 2);
    expect(discord.resumes).toHaveLength(1);
  });

  it("heartbeats with the last sequence, and drops and resumes a socket whose ACK is missed", async () => {
    // Short enough for a quick test, long enough that a slowed, busy machine still gets each
    // ACK before the next heartbeat (at 30 ms it did not: the client reconnected until it gave
    // up its session and identified anew).
    discord.heartbeatMs = 300;
    await connect();
    message("one");
    // A heartbeat carries the last sequence seen (READY's 1, then the message's 2).
    await until("a heartbeat with the message's sequence", () =>
      discord.received.some((f) => f.op === 1 && f.d === 2),
    );
    discord.ack = false;
    // Every socket after this one misses its ACK too, so resumes follow each other every few
    // heartbeats: wait for the first (a poll may see two at once), then let ACKs through again.
    await until("the resume after a missed ACK", () => discord.resumes.length >= 1);
    discord.ack = true;
    expect(lines).toContain("gateway heartbeat not acknowledged: reconnecting");
    expect(discord.identifies).toHaveLength(1);
  });

  it("stops for good: the socket closed, no reconnection", async () => {
    await connect();
    await gateway!.stop();
    await until("the socket closed", () => discord.open === 0);
    gateway = null;
    expect(discord.identifies).toHaveLength(1);
  });
});

describe("discordEvent", () => {
  it("names AutoKitteh's event types and drops the bot's own and unforwarded dispatches", () => {
    const d = { content: "hi", author: { id: "7" } };
    expect(discordEvent("MESSAGE_CREATE", d, "4242")).toEqual({
      event_type: "message_create",
      data: d,
    });
    expect(discordEvent("MESSAGE_CREATE", d, "7")).toBeNull();
    expect(discordEvent("MESSAGE_REACTION_ADD", { user_id: "7" }, "")?.event_type).toBe(
      "message_reaction_add",
    );
    expect(discordEvent("MESSAGE_DELETE", { id: "1" }, "7")?.event_type).toBe("message_delete");
    expect(discordEvent("TYPING_START", { user_id: "7" }, "")).toBeNull();
  });
});
