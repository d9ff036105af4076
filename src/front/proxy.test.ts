import { mkdtempSync, rmSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostProxy } from "./proxy.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A host on a Unix socket and a front on a TCP port passing everything to it. */
async function proxied(host: Handler | null) {
  const dir = mkdtempSync(join(tmpdir(), "hookline-proxy-"));
  const socketPath = join(dir, "host.sock");
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  if (host) {
    const back = http.createServer(host);
    await new Promise<void>((r) => back.listen(socketPath, () => r()));
    cleanups.push(() => new Promise<void>((r) => back.close(() => r())));
    cleanups.push(() => back.closeAllConnections());
  }
  const proxy = hostProxy(socketPath);
  const front = http.createServer(proxy.forward);
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", () => r()));
  cleanups.push(() => new Promise<void>((r) => front.close(() => r())));
  cleanups.push(() => front.closeAllConnections());
  cleanups.push(() => proxy.dispose());
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
}

describe("the front door's way to the host", () => {
  it("passes the method, path, headers and body on, and the answer back", async () => {
    const url = await proxied((req, res) => {
      let body = "";
      req.on("data", (b: Buffer) => {
        body += b.toString();
      });
      req.on("end", () => {
        res.writeHead(201, ["X-Seen", req.headers["x-twice"] as string, "X-Seen", "again"]);
        res.end(`${req.method} ${req.url} ${body} ${req.headers.host} ${req.headers.expect}`);
      });
    });
    const res = await fetch(`${url}/api/v1/projects?x=1`, {
      method: "PUT",
      headers: { "x-twice": "a" },
      body: "payload",
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-seen")).toBe("a, again");
    // The Host the client named (not the socket's), and no Expect (this hop answered it).
    const host = new URL(url).host;
    expect(await res.text()).toBe(`PUT /api/v1/projects?x=1 payload ${host} undefined`);
  });

  it("streams an answer as the host writes it, and lets the host's request go when the client does", async () => {
    let hostSawClose!: () => void;
    const closed = new Promise<void>((r) => {
      hostSawClose = r;
    });
    const url = await proxied((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      req.socket.once("close", () => hostSawClose());
      res.on("close", () => hostSawClose());
    });
    const abort = new AbortController();
    const res = await fetch(`${url}/api/v1/sessions/ses_1/watch`, { signal: abort.signal });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n");
    abort.abort();
    await closed; // never settles (the test times out) if the host's request stays open
  });

  it("relays a host's early answer with Connection: close while the body is still coming", async () => {
    const url = await proxied((_req, res) => {
      res.writeHead(413, { connection: "close", "content-type": "text/plain" });
      res.end("too large");
    });
    const { status, body, closedAfter } = await rawExchange(url, 1 << 20);
    expect(status).toBe(413);
    expect(body).toContain("too large");
    expect(closedAfter).toBe(true);
  });

  it("lets a client still sending after the host's early close read the answer, with no reset", async () => {
    // As the host answers an unknown webhook: at once, closing, its own body read and dropped.
    const url = await proxied((req, res) => {
      req.resume();
      res.writeHead(404, { connection: "close", "content-type": "text/plain" });
      res.end("no such webhook");
    });
    const { text, error, sent } = await sendAfterAnswer(url, 2 << 20);
    expect(error).toBeNull();
    expect(sent).toBe(2 << 20);
    expect(text).toMatch(/^HTTP\/1\.1 404 /);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(text).toContain("no such webhook");
  });

  it("lets the client read the answer when the host closes without reading the body", async () => {
    const url = await proxied((_req, res) => {
      res.writeHead(404, { connection: "close", "content-type": "text/plain" });
      res.end("no such webhook");
    });
    const { text, error, sent } = await sendAfterAnswer(url, 2 << 20);
    expect(error).toBeNull();
    expect(sent).toBe(2 << 20);
    expect(text).toContain("no such webhook");
  });

  it("answers 502 as problem+json when the host cannot be reached", async () => {
    const url = await proxied(null);
    const res = await fetch(`${url}/api/v1/projects`);
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toBe(
      "the service's session host did not answer",
    );
  });
});

/** A POST whose body is sent slowly, read on a raw connection: its answer and whether it closed. */
async function rawExchange(url: string, size: number) {
  const u = new URL(url);
  return new Promise<{ status: number; body: string; closedAfter: boolean }>((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      method: "POST",
      path: "/api/v1/deploy",
      headers: { "content-length": size },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.on("data", (b: Buffer) => {
        body += b.toString();
      });
      res.on("end", () => {
        req.socket?.once("close", () =>
          resolve({ status: res.statusCode!, body, closedAfter: true }),
        );
        if (req.socket?.destroyed) resolve({ status: res.statusCode!, body, closedAfter: true });
      });
    });
    req.write(Buffer.alloc(1024)); // the rest never comes
  });
}

/**
 * A POST of `size` bytes on a raw socket: 64 KiB, then (once the answer has come) the rest in
 * 64 KiB pieces; what was read, how much was sent, and the socket's error (a reset) if any.
 */
async function sendAfterAnswer(url: string, size: number) {
  const u = new URL(url);
  // As Python's and curl's clients do, it goes on sending after the server's FIN.
  const socket = net.connect({ port: Number(u.port), host: u.hostname, allowHalfOpen: true });
  let text = "";
  let error: Error | null = null;
  let sent = 0;
  socket.on("data", (b: Buffer) => {
    text += b.toString();
  });
  socket.on("error", (e) => {
    error = e;
  });
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  const write = (data: string | Buffer) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.write(data, () => resolve());
    });
  await new Promise<void>((r) => socket.once("connect", () => r()));
  await write(`POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
  const piece = Buffer.alloc(64 * 1024, 0x61);
  await write(piece);
  sent += piece.length;
  while (!text.includes("no such webhook") && !socket.destroyed)
    await new Promise((r) => setTimeout(r, 5));
  while (sent < size && !socket.destroyed && !error) {
    await write(piece);
    sent += piece.length;
    await new Promise((r) => setTimeout(r, 1));
  }
  socket.end();
  await closed;
  return { text, error: error as Error | null, sent };
}
