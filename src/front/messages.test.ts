import { setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { type FrontMessage, gatherPosts } from "./messages.ts";

describe("the front's messages to the host", () => {
  it("go as one array per turn, in the order posted; a later turn sends its own", async () => {
    const sent: FrontMessage[][] = [];
    const post = gatherPosts((batch) => sent.push(batch));
    post({ t: "event" });
    post({ t: "publish", source: "p:t", event: { id: "evt_1" } as never });
    post({ t: "log", level: "info", text: "x" });
    expect(sent).toEqual([]); // nothing crosses until the turn ends
    await turn();
    expect(sent.map((b) => b.map((m) => m.t))).toEqual([["event", "publish", "log"]]);
    post({ t: "closed" });
    await turn();
    expect(sent.map((b) => b.map((m) => m.t))).toEqual([["event", "publish", "log"], ["closed"]]);
  });
});
