import { describe, expect, it } from "vitest";
import { buildWebhookData } from "./data.ts";

const ID = "0000000000000000000000abcd";

function dataAt(target: string, prefix = `/webhooks/${ID}`) {
  return buildWebhookData({
    method: "POST",
    url: new URL(`http://h${prefix}${target}`),
    headers: new Headers(),
    body: new Uint8Array(),
    webhookPrefix: prefix,
  });
}

const suffixOf = (target: string, prefix?: string) => dataAt(target, prefix).url.path_suffix;

describe("data.url.path_suffix", () => {
  it("is the path below the id without a leading slash, as AutoKitteh gives it", () => {
    expect(suffixOf("")).toBe("");
    expect(suffixOf("/")).toBe("");
    expect(suffixOf("/new")).toBe("new");
    expect(suffixOf("/api/v1/callback?x=1")).toBe("api/v1/callback");
  });

  it("keeps what follows the one separating slash as sent", () => {
    expect(suffixOf("/a/")).toBe("a/");
    expect(suffixOf("//x")).toBe("/x");
    expect(suffixOf("/%C3%A9%20x")).toBe("%C3%A9%20x");
  });

  it("is the same below a connection's inbound URL", () => {
    expect(suffixOf("/hooks/a", `/inbound/${ID}`)).toBe("hooks/a");
    expect(suffixOf("", `/inbound/${ID}`)).toBe("");
  });

  it("leaves url.path whole", () => {
    const data = dataAt("/game/7");
    expect(data.url).toEqual({ path: `/webhooks/${ID}/game/7`, query: {}, path_suffix: "game/7" });
  });
});

describe("data.headers", () => {
  const headersOf = (pairs: [string, string][]) =>
    buildWebhookData({
      method: "POST",
      url: new URL(`http://h/webhooks/${ID}`),
      headers: new Headers(pairs),
      body: new Uint8Array(),
      webhookPrefix: `/webhooks/${ID}`,
    }).headers;

  it("names each header canonically, every time it comes (names are remembered)", () => {
    for (let i = 0; i < 3; i++) {
      expect(
        headersOf([
          ["x-hub-signature-256", "s"],
          ["content-type", "text/plain"],
        ]),
      ).toEqual({
        "X-Hub-Signature-256": "s",
        "Content-Type": "text/plain",
      });
    }
  });
});
