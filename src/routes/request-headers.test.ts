import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebhookData } from "../events/data.ts";
import { requestHeaders } from "./request-headers.ts";

// What `requestHeaders` reads from Node's raw headers against what `Headers` gives for the same
// request, over a real socket (repeats, case, whitespace, set-cookie).
const app = new Hono();
app.post("/h", (c) => {
  const pairs = requestHeaders(c);
  const data = (headers: Iterable<[string, string]>) =>
    buildWebhookData({
      method: "POST",
      url: new URL("http://h/h"),
      headers,
      body: new Uint8Array(),
      webhookPrefix: "/h",
    }).headers;
  return c.json({
    pairs,
    again: requestHeaders(c) === pairs,
    fromPairs: data(pairs),
    fromHeaders: data(new Headers(c.req.raw.headers)),
  });
});
const server = createServer(getRequestListener(app.fetch));

beforeAll(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)));
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function send(head: string): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    socket.on("data", (d) => {
      out += d.toString("latin1");
    });
    socket.on("end", () => resolve(out));
    socket.on("error", reject);
    socket.end(
      `POST /h HTTP/1.1\r\nHost: x\r\n${head}Content-Length: 0\r\nConnection: close\r\n\r\n`,
    );
  });
}

describe("requestHeaders", () => {
  it("reads Node's raw headers as Headers would give them, repeats apart and in order", async () => {
    const answer = await send(
      "X-Tag: one\r\nZ-Last: z\r\nx-tag:  two \t\r\nSet-Cookie: a=1\r\nACCEPT: */*\r\nset-cookie: b=2\r\n",
    );
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
    expect(body.pairs).toEqual([
      ["accept", "*/*"],
      ["connection", "close"],
      ["content-length", "0"],
      ["host", "x"],
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
      ["x-tag", "one"],
      ["x-tag", "two"],
      ["z-last", "z"],
    ]);
    expect(body.again).toBe(true);
    expect(body.fromPairs).toEqual(body.fromHeaders);
    expect(body.fromPairs["X-Tag"]).toBe("one, two");
    expect(Object.keys(body.fromPairs)).toEqual(Object.keys(body.fromHeaders));
  });

  it("reads the request's Headers where no Node request is behind it", async () => {
    const res = await app.request("/h", {
      method: "POST",
      headers: { "X-Tag": "one", "Content-Type": "text/plain" },
    });
    const body = (await res.json()) as { pairs: unknown };
    expect(body.pairs).toEqual([
      ["content-type", "text/plain"],
      ["x-tag", "one"],
    ]);
  });
});
